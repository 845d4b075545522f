/*
 * hd_emu.c -- an emulator of OpenHaptics' device library (HDAPI, libHD.so) for tests and benchmarks.
 *
 * Built as a shared library with soname libHD.so:
 *     cc -O2 -shared -fPIC -Wl,-soname,libHD.so -o libHD.so hd_emu.c -lm -lpthread
 * so that a program (or pyOpenHaptics, which calls dlopen("libHD.so")) that loaded it first finds it under
 * the vendor's name. It exports the HDAPI functions hapticam and pyOpenHaptics call, with the constants of
 * the public hdDefines.h (OpenHaptics 3.x): device initialisation, frames, parameters (positions in mm,
 * forces in N, stiffness in N/mm), capabilities, the error stack (hdGetError) and the servo scheduler.
 *
 * Scheduler: hdStartScheduler starts a thread that wakes every 1 / rate seconds on CLOCK_MONOTONIC
 * (absolute deadlines, SCHED_FIFO when permitted) and calls the scheduled callbacks in priority order
 * (highest first; equal priorities in scheduling order); a callback returning HD_CALLBACK_DONE is removed.
 * hdUnschedule waits for a running frame to end, so after it returns the callback is not called again.
 *
 * Plant (the equations of hapticam.world.sim, so a rendering here compares with the simulator): one
 * degree of freedom s (m) along the unit axis e of the device's space, a handle of mass m and damping b,
 * a motor with a first-order lag tau, and a scripted user holding the handle through a spring-damper to a
 * reference trajectory (or pushing with a scripted force):
 *     f_m' = (F - f_m) / tau            F = e . F_handle, the commanded force vector on the handle (N)
 *     m s'' = f_user + f_m - b s'       semi-implicit Euler, sub-steps <= 25 us
 *     f_user = k_u (s_ref - s) + b_u (v_ref - v)   (position user) or f_user = f_ref (force user)
 *     s_q = q floor(s / q + 0.5)        encoder quantum q (m)
 *     position (mm) = 1000 (origin + s_q e + d)    d: a constant off-axis displacement of the handle (m)
 * The plant and its scripted user start at the first frame that calls a scheduled callback (so a run compares
 * tick for tick with the simulator however long the host took to prepare); from then on each frame the plant
 * first runs one period (plant clock "frames": exactly 1 / rate; "wall": the time
 * since the last frame) with the force committed by the last frame, then the encoder is sampled and the
 * callbacks run; hdEndFrame commits the new force. A rendering loop therefore sees the simulator's timing:
 * sense, compute, command, advance.
 *
 * Force output: zero unless HD_FORCE_OUTPUT is enabled. |F| beyond HD_NOMINAL_MAX_FORCE is scaled to it
 * when HD_MAX_FORCE_CLAMPING is enabled; otherwise the frame's force is zeroed and HD_EXCEEDED_MAX_FORCE
 * pushed. With HD_SOFTWARE_VELOCITY_LIMIT enabled, a handle faster than the limit zeroes the force and
 * pushes HD_EXCEEDED_MAX_VELOCITY. When no frame commits a force for a period (the servo loop stopped),
 * the device zeroes its output, as the real amplifiers' watchdog does.
 *
 * Injected faults (hdemu_inject(kind, at_frame, count), or HDEMU_FAIL_INIT=1 in the environment; frames are
 * counted from the first that called a callback):
 *     HDEMU_COMM_ERROR     from at_frame on, hdBeginFrame pushes HD_COMM_ERROR and no force reaches the handle
 *     HDEMU_EXCEED_FORCE   count frames from at_frame: hdEndFrame zeroes the force, pushes HD_EXCEEDED_MAX_FORCE
 *     HDEMU_FAIL_INIT      hdInitDevice returns HD_INVALID_HANDLE and pushes HD_DEVICE_FAULT
 *     HDEMU_STOP_RESPONDING from at_frame on, the scheduler calls no callback (until hdStopScheduler)
 *
 * An object in front of the handle (HDEMU_TARGET="S0:d0,f0,d1,f1,..." in the environment, read by
 * hdInitDevice, or hdemu_set_target): its plunger meets the handle at s = S0 (m) and pushes back along -e
 * with a keyswitch curve of the travel d = s - S0 > 0, piecewise linear through (d_i m, f_i N) (constant
 * past the last point; a step at d = 0 is the preload), never pulling:
 *     m s'' = f_user + f_m - f_object(s - S0) - b s'
 * hdemu_object_force() is the object's force (N) at the last frame: the truth a probe estimates.
 *
 * Every frame that called a callback is logged (hdemu_read_log): begin and end time (ns), true and sensed s (m), the force the
 * handle received (N, 3 components), the frame number. hdemu_counters gives the totals.
 */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef unsigned int HHD;
typedef unsigned int HDenum;
typedef unsigned int HDerror;
typedef unsigned int HDCallbackCode;
typedef unsigned long HDSchedulerHandle;
typedef unsigned short HDushort;
typedef unsigned long HDulong;
typedef unsigned char HDboolean;
typedef double HDdouble;
typedef float HDfloat;
typedef int HDint;
typedef const char *HDstring;
typedef HDCallbackCode (*HDSchedulerCallback)(void *pUserData);
typedef struct { HDerror errorCode; int internalErrorCode; HHD hHD; } HDErrorInfo;

/* hdDefines.h (OpenHaptics 3.x) */
#define HD_SUCCESS 0x0000
#define HD_INVALID_ENUM 0x0100
#define HD_INVALID_VALUE 0x0101
#define HD_INVALID_OPERATION 0x0102
#define HD_BAD_HANDLE 0x0104
#define HD_EXCEEDED_MAX_FORCE 0x0201
#define HD_EXCEEDED_MAX_VELOCITY 0x0203
#define HD_DEVICE_FAULT 0x0300
#define HD_DEVICE_ALREADY_INITIATED 0x0301
#define HD_COMM_ERROR 0x0302
#define HD_ILLEGAL_BEGIN 0x0400
#define HD_ILLEGAL_END 0x0401
#define HD_SCHEDULER_FULL 0x0501
#define HD_CURRENT_BUTTONS 0x2000
#define HD_CURRENT_POSITION 0x2050
#define HD_CURRENT_VELOCITY 0x2051
#define HD_CURRENT_TRANSFORM 0x2052
#define HD_DEVICE_MODEL_TYPE 0x2501
#define HD_DEVICE_DRIVER_VERSION 0x2502
#define HD_DEVICE_VENDOR 0x2503
#define HD_DEVICE_SERIAL_NUMBER 0x2504
#define HD_DEVICE_FIRMWARE_VERSION 0x2505
#define HD_MAX_WORKSPACE_DIMENSIONS 0x2550
#define HD_USABLE_WORKSPACE_DIMENSIONS 0x2551
#define HD_INPUT_DOF 0x2553
#define HD_OUTPUT_DOF 0x2554
#define HD_UPDATE_RATE 0x2600
#define HD_INSTANTANEOUS_UPDATE_RATE 0x2601
#define HD_NOMINAL_MAX_STIFFNESS 0x2602
#define HD_NOMINAL_MAX_FORCE 0x2603
#define HD_NOMINAL_MAX_CONTINUOUS_FORCE 0x2604
#define HD_SOFTWARE_VELOCITY_LIMIT 0x2606
#define HD_SOFTWARE_FORCE_IMPULSE_LIMIT 0x2607
#define HD_FORCE_RAMPING_RATE 0x2608
#define HD_NOMINAL_MAX_DAMPING 0x2609
#define HD_CURRENT_FORCE 0x2700
#define HD_LAST_FORCE 0x2800
#define HD_FORCE_OUTPUT 0x4000
#define HD_MAX_FORCE_CLAMPING 0x4001
#define HD_FORCE_RAMPING 0x4002
#define HD_SOFTWARE_FORCE_LIMIT 0x4003
#define HD_ONE_FRAME_LIMIT 0x4004
#define HD_CALLBACK_DONE 0
#define HD_INVALID_HANDLE 0xFFFFFFFFu
#define HD_DEVICE_HANDLE 1u

#define HDEMU_COMM_ERROR 1
#define HDEMU_EXCEED_FORCE 2
#define HDEMU_FAIL_INIT 3
#define HDEMU_STOP_RESPONDING 4

#define MAX_CALLBACKS 32
#define MAX_ERRORS 16
#define LOG_COLS 9
#define MAX_CURVE 64

/* ---- parameters (hdemu_set_param) ---- */
static double P_mass = 0.05, P_damp = 2.0, P_fmax = 8.0, P_fcont = 4.0, P_bw = 1000.0, P_sub = 25e-6;
static double P_res = 1e-6, P_rate = 1000.0, P_kmax_Npmm = 4.0, P_bmax_Nspmm = 0.002, P_impulse = 8.0;
static double P_vlim_mmps = 1e6, P_ramp_rate = 1e4;
static double P_axis[3] = {0.0, -1.0, 0.0}, P_origin[3] = {0.0, 0.0, 0.0}, P_off[3] = {0.0, 0.0, 0.0};
static double P_ws[6] = {-80.0, -30.0, -60.0, 80.0, 20.0, 60.0};   /* usable workspace, mm (min xyz, max xyz) */
static int P_wall_clock = 0;
/* ---- scripted user ---- */
static double *U_tab = NULL;
static long U_n = 0;
static int U_mode = 0;
static double U_k = 0, U_b = 0, U_t0 = 0, U_dt = 1, U_period = 0;
/* ---- the object the handle presses ---- */
static double T_at = NAN, T_curve[2 * MAX_CURVE], FT = 0;
static int T_n = 0;
/* ---- plant ---- */
static double X = 0, V = 0, FM = 0, TP = 0, FU = 0, XS = 0, VS = 0;
static double f_pending[3], f_applied[3];
static int committed = 0, plant_live = 0;
/* ---- device, capabilities, errors ---- */
static int initialised = 0, in_frame = 0, enabled_mask = 0;
static int F_comm_at = -1, F_exceed_at = -1, F_exceed_n = 0, F_fail_init = 0, F_stall_at = -1;
static HDErrorInfo err_stack[MAX_ERRORS];
static int err_n = 0;
static pthread_mutex_t err_mutex = PTHREAD_MUTEX_INITIALIZER;
/* ---- scheduler ---- */
typedef struct { HDSchedulerCallback cb; void *data; HDushort prio; unsigned long id; int active; } Slot;
static Slot slots[MAX_CALLBACKS];
static unsigned long next_id = 1;
static pthread_mutex_t sched_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_t sched_thread;
static volatile int sched_running = 0, sched_stop = 0;
static long frame_no = 0, live_no = 0, n_calls = 0, n_errors = 0, n_clamped = 0, n_zeroed = 0, n_stalled = 0;
static double t_frame_s = 0.0;
/* ---- frame log ---- */
static double *log_buf = NULL;
static long log_cap = 0, log_n = 0;

static int cap_bit(HDenum cap) {
    switch (cap) {
    case HD_FORCE_OUTPUT: return 1;
    case HD_MAX_FORCE_CLAMPING: return 2;
    case HD_FORCE_RAMPING: return 4;
    case HD_SOFTWARE_FORCE_LIMIT: return 8;
    case HD_ONE_FRAME_LIMIT: return 16;
    case HD_SOFTWARE_VELOCITY_LIMIT: return 32;
    case HD_SOFTWARE_FORCE_IMPULSE_LIMIT: return 64;
    default: return 0;
    }
}

static double mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void push_error(HDerror code, int internal) {
    pthread_mutex_lock(&err_mutex);
    if (err_n < MAX_ERRORS) {
        err_stack[err_n].errorCode = code;
        err_stack[err_n].internalErrorCode = internal;
        err_stack[err_n].hHD = HD_DEVICE_HANDLE;
        err_n++;
    }
    n_errors++;
    pthread_mutex_unlock(&err_mutex);
}

/* ---- plant ---- */
static void user_reference(double t, double *ref, double *rate) {
    if (U_n == 0) { *ref = 0; *rate = 0; return; }
    if (U_period > 0 && t > U_t0) t = U_t0 + fmod(t - U_t0, U_period);   /* periodic user: t mod period */
    double s = (t - U_t0) / U_dt;
    if (s <= 0) { *ref = U_tab[0]; *rate = s == 0 ? U_tab[1] : 0; return; }
    if (s >= U_n - 1) { *ref = U_tab[2 * (U_n - 1)]; *rate = 0; return; }
    long i = (long)s;
    double w = s - i;
    *ref = U_tab[2 * i] + w * (U_tab[2 * i + 2] - U_tab[2 * i]);           /* linear interpolation */
    *rate = U_tab[2 * i + 1] + w * (U_tab[2 * i + 3] - U_tab[2 * i + 1]);
}

/* the object's push along -e on the handle at s (N, >= 0) */
static double object_force(double s) {
    if (T_n == 0 || isnan(T_at) || s <= T_at) return 0.0;
    double d = s - T_at;
    if (d >= T_curve[2 * (T_n - 1)]) return T_curve[2 * T_n - 1];
    for (int i = 0; i + 1 < T_n; i++)
        if (d < T_curve[2 * i + 2]) {
            double w = (d - T_curve[2 * i]) / (T_curve[2 * i + 2] - T_curve[2 * i]);
            double f = T_curve[2 * i + 1] + w * (T_curve[2 * i + 3] - T_curve[2 * i + 1]);
            return f > 0 ? f : 0.0;
        }
    return 0.0;
}

static void plant_advance(double dt) {
    if (dt <= 0) return;
    long n = (long)ceil(dt / P_sub - 1e-9);
    if (n < 1) n = 1;
    double h = dt / n;
    double tau = P_bw > 0 ? 1.0 / (2 * M_PI * P_bw) : 0;
    double lag = tau > 0 ? 1.0 - exp(-h / tau) : 1.0;   /* exact first-order response to a held input */
    double f = f_applied[0] * P_axis[0] + f_applied[1] * P_axis[1] + f_applied[2] * P_axis[2];
    for (long j = 0; j < n; j++) {
        double t = TP + j * h, ref, rate;
        FM += (f - FM) * lag;                            /* f_m' = (F - f_m) / tau */
        user_reference(t, &ref, &rate);
        FU = U_mode == 1 ? ref : U_k * (ref - X) + U_b * (rate - V);
        FT = object_force(X);
        double a = (FU + FM - FT - P_damp * V) / P_mass; /* m s'' = f_user + f_m - f_object - b s' */
        V += a * h;                                      /* semi-implicit Euler */
        X += V * h;
    }
    TP += dt;
}

static void sample_encoder(void) {
    XS = P_res > 0 ? P_res * floor(X / P_res + 0.5) : X;   /* s_q = q floor(s / q + 0.5) */
    VS = V;
}

/* ---- the frame: commit a force ---- */
static void commit_force(void) {
    double f[3] = {f_pending[0], f_pending[1], f_pending[2]};
    double mag = sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    int zero = !(enabled_mask & 1) || (F_comm_at >= 0 && live_no >= F_comm_at);
    if (!zero && F_exceed_at >= 0 && live_no >= F_exceed_at && live_no < F_exceed_at + F_exceed_n) {
        push_error(HD_EXCEEDED_MAX_FORCE, 1);
        zero = 1;
    }
    if (!zero && mag > P_fmax) {
        if (enabled_mask & 2) {                          /* HD_MAX_FORCE_CLAMPING: scale to the maximum */
            for (int i = 0; i < 3; i++) f[i] *= P_fmax / mag;
            n_clamped++;
        } else {
            push_error(HD_EXCEEDED_MAX_FORCE, 2);
            zero = 1;
        }
    }
    if (!zero && (enabled_mask & 32) && fabs(VS) * 1000.0 > P_vlim_mmps) {
        push_error(HD_EXCEEDED_MAX_VELOCITY, 0);
        zero = 1;
    }
    if (zero) { f[0] = f[1] = f[2] = 0.0; n_zeroed++; }
    memcpy(f_applied, f, sizeof f);
    committed = 1;
}

/* ---- scheduler thread ---- */
static void log_frame(double t0, double t1) {
    if (log_buf == NULL || log_cap == 0) return;
    double *r = log_buf + (log_n % log_cap) * LOG_COLS;
    r[0] = t0; r[1] = t1; r[2] = X; r[3] = XS;
    r[4] = f_applied[0]; r[5] = f_applied[1]; r[6] = f_applied[2];
    r[7] = (double)live_no; r[8] = TP;
    log_n++;
}

static int run_callbacks(void) {
    int called = 0;
    pthread_mutex_lock(&sched_mutex);
    for (int pass = 0; pass < MAX_CALLBACKS; pass++) {    /* highest priority first, then scheduling order */
        int best = -1;
        for (int i = 0; i < MAX_CALLBACKS; i++)
            if (slots[i].active == 1 && (best < 0 || slots[i].prio > slots[best].prio ||
                                         (slots[i].prio == slots[best].prio && slots[i].id < slots[best].id)))
                best = i;
        if (best < 0) break;
        slots[best].active = 2;                           /* called this frame */
        n_calls++;
        called++;
        if (slots[best].cb(slots[best].data) == HD_CALLBACK_DONE) slots[best].active = 0;
    }
    for (int i = 0; i < MAX_CALLBACKS; i++) if (slots[i].active == 2) slots[i].active = 1;
    pthread_mutex_unlock(&sched_mutex);
    return called;
}

static void *scheduler_main(void *arg) {
    (void)arg;
    struct sched_param sp = {.sched_priority = 90};
    pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);  /* real-time when permitted; ignored otherwise */
    long period_ns = (long)llround(1e9 / P_rate);
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    double last = mono_ns();
    while (!sched_stop) {
        next.tv_nsec += period_ns;
        while (next.tv_nsec >= 1000000000L) { next.tv_nsec -= 1000000000L; next.tv_sec += 1; }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
        double now = mono_ns();
        if (plant_live) plant_advance(P_wall_clock ? (now - last) * 1e-9 : 1.0 / P_rate);
        last = now;
        if (F_stall_at >= 0 && live_no >= F_stall_at) {   /* stopped responding: no callback runs */
            f_applied[0] = f_applied[1] = f_applied[2] = 0.0;
            n_stalled++;
            frame_no++;
            continue;
        }
        sample_encoder();
        committed = 0;
        t_frame_s = TP;
        double t0 = mono_ns();
        int called = run_callbacks();
        if (!committed) f_applied[0] = f_applied[1] = f_applied[2] = 0.0;  /* the amplifiers' watchdog */
        if (called) {                                     /* the plant and its user start with the servo loop */
            plant_live = 1;
            log_frame(t0, mono_ns());
        }
        frame_no++;
        if (plant_live) live_no++;
    }
    return NULL;
}

int hdemu_set_target(double at, const double *curve, long n);

/* "S0:d0,f0,d1,f1,..." (m, N; d from 0, rising): 0, or -1 when malformed (the object is then absent) */
static int parse_target(const char *text) {
    char *end;
    double at = strtod(text, &end), v[2 * MAX_CURVE];
    int n = 0;
    if (end == text || *end != ':') return -1;
    for (const char *c = end + 1; *c && n < 2 * MAX_CURVE; c = *end ? end + 1 : end) {
        v[n++] = strtod(c, &end);
        if (end == c || (*end && *end != ',')) return -1;
    }
    return hdemu_set_target(at, v, n / 2) == 0 && n % 2 == 0 ? 0 : -1;
}

/* ================================ HDAPI ================================ */
HHD hdInitDevice(HDstring name) {
    (void)name;
    const char *env = getenv("HDEMU_FAIL_INIT");
    if (F_fail_init || (env != NULL && env[0] == '1')) { push_error(HD_DEVICE_FAULT, -1); return HD_INVALID_HANDLE; }
    if (initialised) { push_error(HD_DEVICE_ALREADY_INITIATED, 0); return HD_INVALID_HANDLE; }
    const char *target = getenv("HDEMU_TARGET");
    if (target != NULL && target[0] != '\0' && parse_target(target) != 0) { push_error(HD_INVALID_VALUE, -4); return HD_INVALID_HANDLE; }
    initialised = 1;
    enabled_mask = 0;
    return HD_DEVICE_HANDLE;
}

void hdDisableDevice(HHD h) {
    if (h != HD_DEVICE_HANDLE || !initialised) { push_error(HD_BAD_HANDLE, 0); return; }
    enabled_mask = 0;
    f_applied[0] = f_applied[1] = f_applied[2] = 0.0;
    initialised = 0;
}

HHD hdGetCurrentDevice(void) { return initialised ? HD_DEVICE_HANDLE : HD_INVALID_HANDLE; }
void hdMakeCurrentDevice(HHD h) { if (h != HD_DEVICE_HANDLE) push_error(HD_BAD_HANDLE, 0); }

void hdBeginFrame(HHD h) {
    if (h != HD_DEVICE_HANDLE || !initialised) { push_error(HD_BAD_HANDLE, 0); return; }
    if (in_frame) { push_error(HD_ILLEGAL_BEGIN, 0); return; }
    in_frame = 1;
    f_pending[0] = f_pending[1] = f_pending[2] = 0.0;
    if (F_comm_at >= 0 && live_no >= F_comm_at) push_error(HD_COMM_ERROR, -2);
}

void hdEndFrame(HHD h) {
    if (h != HD_DEVICE_HANDLE || !initialised) { push_error(HD_BAD_HANDLE, 0); return; }
    if (!in_frame) { push_error(HD_ILLEGAL_END, 0); return; }
    in_frame = 0;
    commit_force();
}

static void position_mm(double s, double *out) {
    for (int i = 0; i < 3; i++) out[i] = 1000.0 * (P_origin[i] + s * P_axis[i] + P_off[i]);
}

void hdGetDoublev(HDenum what, HDdouble *v) {
    switch (what) {
    case HD_CURRENT_POSITION: position_mm(XS, v); return;
    case HD_CURRENT_VELOCITY: for (int i = 0; i < 3; i++) v[i] = 1000.0 * VS * P_axis[i]; return;
    case HD_CURRENT_TRANSFORM:                            /* 4x4 column-major, identity rotation */
        memset(v, 0, 16 * sizeof(double));
        v[0] = v[5] = v[10] = v[15] = 1.0;
        position_mm(XS, v + 12);
        return;
    case HD_CURRENT_FORCE: case HD_LAST_FORCE: memcpy(v, f_applied, 3 * sizeof(double)); return;
    case HD_NOMINAL_MAX_FORCE: v[0] = P_fmax; return;
    case HD_NOMINAL_MAX_CONTINUOUS_FORCE: v[0] = P_fcont; return;
    case HD_NOMINAL_MAX_STIFFNESS: v[0] = P_kmax_Npmm; return;
    case HD_NOMINAL_MAX_DAMPING: v[0] = P_bmax_Nspmm; return;
    case HD_USABLE_WORKSPACE_DIMENSIONS: memcpy(v, P_ws, 6 * sizeof(double)); return;
    case HD_MAX_WORKSPACE_DIMENSIONS: for (int i = 0; i < 6; i++) v[i] = P_ws[i] * 1.25; return;
    case HD_SOFTWARE_VELOCITY_LIMIT: v[0] = P_vlim_mmps; return;
    case HD_SOFTWARE_FORCE_IMPULSE_LIMIT: v[0] = P_impulse; return;
    case HD_FORCE_RAMPING_RATE: v[0] = P_ramp_rate; return;
    case HD_UPDATE_RATE: case HD_INSTANTANEOUS_UPDATE_RATE: v[0] = P_rate; return;
    default: push_error(HD_INVALID_ENUM, (int)what);
    }
}

void hdGetFloatv(HDenum what, HDfloat *v) {
    double d[16] = {0};
    hdGetDoublev(what, d);
    for (int i = 0; i < 3; i++) v[i] = (float)d[i];
}

void hdGetIntegerv(HDenum what, HDint *v) {
    switch (what) {
    case HD_UPDATE_RATE: case HD_INSTANTANEOUS_UPDATE_RATE: v[0] = (int)llround(P_rate); return;
    case HD_INPUT_DOF: v[0] = 6; return;
    case HD_OUTPUT_DOF: v[0] = 3; return;
    case HD_CURRENT_BUTTONS: v[0] = 0; return;
    default: push_error(HD_INVALID_ENUM, (int)what);
    }
}

HDstring hdGetString(HDenum what) {
    switch (what) {
    case HD_DEVICE_MODEL_TYPE: return "Touch (hd_emu)";
    case HD_DEVICE_VENDOR: return "3D Systems (emulated by hapticam)";
    case HD_DEVICE_SERIAL_NUMBER: return "EMU-00001";
    case HD_DEVICE_DRIVER_VERSION: return "hd_emu 1";
    case HD_DEVICE_FIRMWARE_VERSION: return "0";
    default: push_error(HD_INVALID_ENUM, (int)what); return "";
    }
}

void hdSetDoublev(HDenum what, const HDdouble *v) {
    switch (what) {
    case HD_CURRENT_FORCE:
        if (!in_frame) { push_error(HD_INVALID_OPERATION, 0); return; }
        memcpy(f_pending, v, 3 * sizeof(double));
        return;
    case HD_SOFTWARE_VELOCITY_LIMIT: P_vlim_mmps = v[0]; return;
    case HD_SOFTWARE_FORCE_IMPULSE_LIMIT: P_impulse = v[0]; return;
    case HD_FORCE_RAMPING_RATE: P_ramp_rate = v[0]; return;
    default: push_error(HD_INVALID_ENUM, (int)what);
    }
}

void hdSetFloatv(HDenum what, const HDfloat *v) {
    double d[3] = {v[0], v[1], v[2]};
    hdSetDoublev(what, d);
}

void hdEnable(HDenum cap) { int b = cap_bit(cap); if (b) enabled_mask |= b; else push_error(HD_INVALID_ENUM, (int)cap); }
void hdDisable(HDenum cap) {
    int b = cap_bit(cap);
    if (!b) { push_error(HD_INVALID_ENUM, (int)cap); return; }
    enabled_mask &= ~b;
    if (b == 1) f_applied[0] = f_applied[1] = f_applied[2] = 0.0;   /* force output off: nothing on the handle */
}
HDboolean hdIsEnabled(HDenum cap) { return (enabled_mask & cap_bit(cap)) != 0; }

void hdStartScheduler(void) {
    if (sched_running) return;
    sched_stop = 0;
    if (pthread_create(&sched_thread, NULL, scheduler_main, NULL) == 0) sched_running = 1;
    else push_error(HD_DEVICE_FAULT, -3);
}

void hdStopScheduler(void) {
    if (!sched_running) return;
    sched_stop = 1;
    pthread_join(sched_thread, NULL);
    sched_running = 0;
}

void hdSetSchedulerRate(HDulong rate) { if (rate > 0) P_rate = (double)rate; }

HDSchedulerHandle hdScheduleAsynchronous(HDSchedulerCallback cb, void *data, HDushort prio) {
    pthread_mutex_lock(&sched_mutex);
    for (int i = 0; i < MAX_CALLBACKS; i++) {
        if (slots[i].active == 0) {
            slots[i] = (Slot){cb, data, prio, next_id++, 1};
            pthread_mutex_unlock(&sched_mutex);
            return slots[i].id;
        }
    }
    pthread_mutex_unlock(&sched_mutex);
    push_error(HD_SCHEDULER_FULL, 0);
    return 0;
}

void hdScheduleSynchronous(HDSchedulerCallback cb, void *data, HDushort prio) {
    (void)prio;
    pthread_mutex_lock(&sched_mutex);                     /* between frames: called on this thread */
    while (cb(data) != HD_CALLBACK_DONE) {}
    pthread_mutex_unlock(&sched_mutex);
}

void hdUnschedule(HDSchedulerHandle id) {
    pthread_mutex_lock(&sched_mutex);                     /* waits for a running frame to end */
    for (int i = 0; i < MAX_CALLBACKS; i++) if (slots[i].active && slots[i].id == id) slots[i].active = 0;
    pthread_mutex_unlock(&sched_mutex);
}

HDdouble hdGetSchedulerTimeStamp(void) { return t_frame_s; }

HDErrorInfo hdGetError(void) {
    HDErrorInfo e = {HD_SUCCESS, 0, HD_DEVICE_HANDLE};
    pthread_mutex_lock(&err_mutex);
    if (err_n > 0) e = err_stack[--err_n];                /* the most recent error first */
    pthread_mutex_unlock(&err_mutex);
    return e;
}

HDstring hdGetErrorString(HDerror code) {
    switch (code) {
    case HD_SUCCESS: return "No error";
    case HD_EXCEEDED_MAX_FORCE: return "Exceeded max force";
    case HD_EXCEEDED_MAX_VELOCITY: return "Exceeded max velocity";
    case HD_DEVICE_FAULT: return "Device fault";
    case HD_COMM_ERROR: return "Communication error";
    case HD_INVALID_ENUM: return "Invalid enum";
    default: return "Error";
    }
}

/* ========================== emulator control ========================== */
int hdemu_set_param(const char *name, double v) {
#define P(key, var) if (strcmp(name, key) == 0) { var = v; return 0; }
    P("mass_kg", P_mass) P("damping_N_s_per_m", P_damp) P("max_force_N", P_fmax) P("continuous_force_N", P_fcont)
    P("bandwidth_hz", P_bw) P("substep_s", P_sub) P("resolution_m", P_res) P("rate_hz", P_rate)
    P("max_stiffness_N_per_mm", P_kmax_Npmm) P("max_damping_N_s_per_mm", P_bmax_Nspmm)
    P("impulse_limit_N", P_impulse) P("velocity_limit_mm_per_s", P_vlim_mmps)
    P("axis_x", P_axis[0]) P("axis_y", P_axis[1]) P("axis_z", P_axis[2])
    P("origin_x_m", P_origin[0]) P("origin_y_m", P_origin[1]) P("origin_z_m", P_origin[2])
    P("offaxis_x_m", P_off[0]) P("offaxis_y_m", P_off[1]) P("offaxis_z_m", P_off[2])
    P("ws_min_x_mm", P_ws[0]) P("ws_min_y_mm", P_ws[1]) P("ws_min_z_mm", P_ws[2])
    P("ws_max_x_mm", P_ws[3]) P("ws_max_y_mm", P_ws[4]) P("ws_max_z_mm", P_ws[5])
    P("x0_m", X)
    if (strcmp(name, "wall_clock") == 0) { P_wall_clock = v != 0; return 0; }
#undef P
    return -1;
}

/* The object (module comment): plunger at s = at (m), curve of n (travel m, force N) pairs, d_0 = 0 and
 * rising; n = 0 removes it. Returns 0, or -1 for a malformed curve (the object is then absent). */
int hdemu_set_target(double at, const double *curve, long n) {
    T_n = 0;
    if (n == 0) return 0;
    if (n < 0 || n > MAX_CURVE || curve == NULL || curve[0] != 0.0 || !isfinite(at)) return -1;
    for (long i = 1; i < n; i++) if (!(curve[2 * i] > curve[2 * i - 2])) return -1;
    memcpy(T_curve, curve, (size_t)n * 2 * sizeof(double));
    T_at = at;
    T_n = (int)n;
    return 0;
}

/* The object's force on the handle at the last plant step (N, pushing along -e; 0 out of contact). */
double hdemu_object_force(void) { return FT; }

int hdemu_set_user(const double *tab, long n, int mode, double k, double b, double t0, double dt, double period,
                   double x0) {
    free(U_tab);
    U_tab = NULL;
    U_n = 0;
    if (n < 1 || tab == NULL) return -1;
    U_tab = malloc((size_t)n * 2 * sizeof(double));
    if (U_tab == NULL) return -1;
    memcpy(U_tab, tab, (size_t)n * 2 * sizeof(double));
    U_n = n; U_mode = mode; U_k = k; U_b = b; U_t0 = t0; U_dt = dt; U_period = period; X = x0;
    sample_encoder();                                     /* the handle where the user holds it */
    return 0;
}

void hdemu_inject(int kind, long at_frame, long count) {
    switch (kind) {
    case HDEMU_COMM_ERROR: F_comm_at = (int)at_frame; break;
    case HDEMU_EXCEED_FORCE: F_exceed_at = (int)at_frame; F_exceed_n = (int)count; break;
    case HDEMU_FAIL_INIT: F_fail_init = count != 0; break;
    case HDEMU_STOP_RESPONDING: F_stall_at = (int)at_frame; break;
    default: break;
    }
}

/* Forget every fault, the user, the object, the plant state, the log and the counters (between runs of one
 * process). */
void hdemu_reset(void) {
    hdStopScheduler();
    T_n = 0;
    FT = 0.0;
    F_comm_at = F_exceed_at = F_stall_at = -1;
    F_exceed_n = F_fail_init = 0;
    X = V = FM = TP = FU = XS = VS = 0.0;
    plant_live = 0;
    memset(f_pending, 0, sizeof f_pending);
    memset(f_applied, 0, sizeof f_applied);
    memset(slots, 0, sizeof slots);
    frame_no = live_no = n_calls = n_errors = n_clamped = n_zeroed = n_stalled = 0;
    err_n = 0; log_n = 0; in_frame = 0; initialised = 0; enabled_mask = 0;
    free(U_tab);                                          /* no hand at the handle until one is set */
    U_tab = NULL;
    U_n = 0; U_mode = 0; U_k = U_b = 0.0;
}

int hdemu_set_log(long capacity) {
    free(log_buf);
    log_buf = NULL;
    log_cap = log_n = 0;
    if (capacity <= 0) return 0;
    log_buf = calloc((size_t)capacity * LOG_COLS, sizeof(double));
    if (log_buf == NULL) return -1;
    log_cap = capacity;
    return 0;
}

/* Copy the logged frames (oldest first, at most max_rows) into out[rows][LOG_COLS]; returns the rows copied. */
long hdemu_read_log(double *out, long max_rows) {
    long have = log_n < log_cap ? log_n : log_cap, first = log_n - have, n = have < max_rows ? have : max_rows;
    for (long i = 0; i < n; i++) memcpy(out + i * LOG_COLS, log_buf + ((first + i) % log_cap) * LOG_COLS,
                                        LOG_COLS * sizeof(double));
    return n;
}

/* frames, callback calls, errors pushed, forces clamped, forces zeroed, stalled frames, enabled capabilities */
void hdemu_counters(long *out) {
    out[0] = frame_no; out[1] = n_calls; out[2] = n_errors; out[3] = n_clamped; out[4] = n_zeroed;
    out[5] = n_stalled; out[6] = enabled_mask;
}
