/*
 * hsp_emu.c -- reference firmware of the hapticam serial protocol (hsp v1), run as an emulator.
 *
 * The device side of devices/serial_protocol.md: frame parser with CRC-16/CCITT-FALSE check, HELLO/INFO,
 * CONFIG, ENABLE, FORCE/STATE in lockstep (or STATE streamed at a configured rate), SET_ZERO, DISABLE,
 * and the firmware watchdog (force off when FORCE stops arriving for the watchdog time). A firmware
 * author ports handle_frame(), the watchdog and the CRC; the plant below stands in for the motor and the
 * encoder.
 *
 * Plant (the same equations as hapticam.world.sim, so a rendering on this emulator compares with the
 * simulator): a handle of mass m and damping b, a motor with a first-order lag tau, and a scripted user
 * holding the handle through a spring-damper to a reference trajectory (or pushing with a scripted force):
 *     f_m' = (F - f_m) / tau                    F: commanded force on the handle along +x, clamped to F_max
 *     m x'' = f_user + f_m - b x'               semi-implicit Euler, sub-steps <= 25 us
 *     f_user = k_u (x_ref - x) + b_u (v_ref - v)  (position user) or f_user = f_ref (force user)
 *     counts = floor(x cpm + 0.5)               encoder quantisation, 1 / cpm metres per count
 * On each FORCE the plant first runs on with the force it held (to the present on the wall clock,
 * --plant-clock wall, as a real device; or by --frame-dt-us, --plant-clock frames: deterministic, the
 * simulator's clock), then the encoder is sampled, the new force applied and STATE sent: the host's next
 * force is computed from a position one period old (one tick of delay).
 *
 * Faults for tests (times in ms after ENABLE): --drop-every N (every Nth STATE not sent),
 * --corrupt-every N (every Nth STATE sent with a flipped payload bit: bad CRC), --late-every N --late-us U
 * (every Nth STATE sent U us late), --silence-at-ms T --silence-ms D (neither read nor write for D ms;
 * D < 0: for ever), --unplug-at-ms T (close the line and exit: a hang-up on the host's side), --slow-us U
 * (every frame received after ENABLE takes U us to handle: a firmware slower than the host's rate, whose
 * input backs up in the line and whose replies fall behind).
 *
 * Line: --fd N uses an open pseudo-terminal master (the caller set the slave raw); without it the
 * emulator opens a pseudo-terminal itself, sets it raw and prints the slave's path on stdout.
 * Events and a closing summary ("hsp_emu: summary key=value ...") are written to stderr.
 *
 * Probing (new frame types beside v1's; a v1 host never sends them): POSITION holds the handle at a
 * target with a position servo run at every plant sub-step (the firmware rate), PD with the force clamped
 * to the frame's limit and F_max:
 *     F = k_s (x_target - x) - b_s x'           --servo-kp, --servo-kd
 * and PROBE_STATE reports the actuator's force, the load cell (the push of the handle on the object) and
 * the object's electrical contact. The object (--target-at X0, the position its plunger meets the handle)
 * pushes back along -x with a keyswitch curve of the travel d = x - X0 > 0, piecewise linear through
 * --target-curve "d0,f0,d1,f1,..." (m, N; constant past the last point, a step at d = 0 is the preload),
 * plus --target-damping b_t d' while it pushes (an object never pulls); its contact closes at
 * --contact-at D (travel, m) and opens below --release-at D (default: the same). --fault-at-ms T: the
 * device reports a fault (status 0x10), force off and disabled, T ms after ENABLE.
 *
 * Axis kind (AXIS -> AXIS_INFO; a v1 firmware without the frame answers ERROR 2 and is linear): --axis linear
 * (the default), --axis rotary (a knob: the same plant and fields read in rad, N m, N m s/rad, kg m^2, counts
 * per radian, torque in uN m; --inertia, --counts-per-rad name --mass and --cpm in those units), --axis none
 * (a firmware from before the frame: AXIS answered with ERROR 2).
 *
 * Build: cc -O2 -o hsp_emu hsp_emu.c -lm
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define SYNC0 0xA5
#define SYNC1 0x5A
#define MAX_PAYLOAD 64
#define T_HELLO 0x01
#define T_CONFIG 0x02
#define T_ENABLE 0x03
#define T_FORCE 0x04
#define T_SET_ZERO 0x05
#define T_DISABLE 0x06
#define T_POSITION 0x07
#define T_AXIS 0x08
#define T_AXIS_INFO 0x86
#define T_PROBE_STATE 0x85
#define T_INFO 0x81
#define T_STATE 0x82
#define T_ACK 0x83
#define T_ERROR 0x84
#define ST_ENABLED 0x01
#define ST_WATCHDOG 0x02
#define ST_CLAMPED 0x04
#define ST_RX_ERROR 0x08
#define ST_FAULT 0x10
#define ST_CONTACT 0x20
#define ST_SERVO_LIMIT 0x40
#define MAX_CURVE 64
#define E_LENGTH 1
#define E_TYPE 2
#define E_NOT_ENABLED 3
#define E_CONFIG 4
#define E_VERSION 5

/* --- configuration (command line) --- */
static double P_mass = 0.05, P_damp = 2.0, P_fmax = 8.0, P_fcont = 4.0, P_rate = 8000.0, P_bw = 1000.0;
static double P_cpm = 1e6, P_ws_lo = -0.02, P_ws_hi = 0.03, P_sub = 25e-6, P_frame_dt = 1e-3;
static const char *P_name = "hsp-emu";
static int P_frames_clock = 0;
static int P_axis = 0;                                   /* 0 linear, 1 rotary, -1 no AXIS frame (ERROR 2) */
static int F_drop = 0, F_corrupt = 0, F_late = 0, F_late_us = 0;
static double F_silence_at = -1, F_silence_ms = 0, F_unplug_at = -1;
static long F_slow_us = 0;
static double F_fault_at = -1;
/* probing: the position servo and the object it presses */
static double S_kp = 20000.0, S_kd = 60.0;
static double T_at = NAN, T_curve[2 * MAX_CURVE], T_damp = 0, T_on = NAN, T_off = NAN;
static int T_n = 0;
/* scripted user */
static double *U_tab = NULL;
static long U_n = 0;
static int U_mode = 0;
static double U_k = 0, U_b = 0, U_t0 = 0, U_dt = 1, U_period = 0, U_x0 = 0;

/* --- firmware state --- */
static int fd = -1, enabled = 0, ever_enabled = 0, wd_ms = 50, stream_hz = 0, wd_armed = 0, wd_latched = 0, clamped = 0;
static int rx_error_latched = 0;
static int probing = 0, pos_mode = 0, servo_limited = 0, contact = 0, faulted = 0;
static double S_ref = 0, S_limit = 0, FT = 0, FS = 0;
static uint32_t last_seq = 0;
static double f_cmd = 0, last_force_t = 0, enable_t = 0, next_stream_t = 0, t0_wall = 0;
static long zero_counts = 0;
static volatile sig_atomic_t stop_flag = 0;
/* plant */
static double X = 0, V = 0, FM = 0, TP = 0, FU = 0;
/* counters for the summary */
static long n_rx = 0, n_crc = 0, n_state = 0, n_dropped = 0, n_corrupt = 0, n_late = 0, n_wd = 0;
static long n_force = 0, n_silent_ms = 0, n_disable = 0;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9 - t0_wall;
}

/* CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, MSB first, no final XOR; crc16("123456789") = 0x29B1 */
static uint16_t crc16(const uint8_t *p, size_t n) {
    uint16_t c = 0xFFFF;
    for (size_t i = 0; i < n; i++) {
        c ^= (uint16_t)(p[i] << 8);
        for (int b = 0; b < 8; b++) c = (c & 0x8000) ? (uint16_t)((c << 1) ^ 0x1021) : (uint16_t)(c << 1);
    }
    return c;
}

static void put_u16(uint8_t *p, uint32_t v) { p[0] = v & 0xFF; p[1] = (v >> 8) & 0xFF; }
static void put_u32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (v >> (8 * i)) & 0xFF; }
static uint32_t get_u32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static void put_f32(uint8_t *p, double v) { float f = (float)v; uint32_t u; memcpy(&u, &f, 4); put_u32(p, u); }

static void send_frame(uint8_t type, const uint8_t *payload, uint8_t len, int corrupt) {
    uint8_t buf[MAX_PAYLOAD + 6];
    buf[0] = SYNC0; buf[1] = SYNC1; buf[2] = type; buf[3] = len;
    memcpy(buf + 4, payload, len);
    put_u16(buf + 4 + len, crc16(buf + 2, (size_t)len + 2));
    if (corrupt) buf[4 + len / 2] ^= 0x10;           /* one flipped bit after the CRC was computed */
    size_t off = 0;
    while (off < (size_t)len + 6 && !stop_flag) {        /* a host that never reads cannot hang us */
        ssize_t w = write(fd, buf + off, (size_t)len + 6 - off);
        if (w < 0 && (errno == EAGAIN || errno == EINTR)) { struct pollfd p = {fd, POLLOUT, 0}; poll(&p, 1, 5); continue; }
        if (w <= 0) { stop_flag = 1; return; }
        off += (size_t)w;
    }
}

static void send_ack(uint8_t type) { send_frame(T_ACK, &type, 1, 0); }
static void send_error(uint8_t type, uint8_t code) { uint8_t p[2] = {type, code}; send_frame(T_ERROR, p, 2, 0); }

/* --- plant --- */
static void user_reference(double t, double *ref, double *rate) {
    if (U_n == 0) { *ref = 0; *rate = 0; return; }
    if (U_period > 0 && t > U_t0) t = U_t0 + fmod(t - U_t0, U_period);   /* periodic user */
    double s = (t - U_t0) / U_dt;
    if (s <= 0) { *ref = U_tab[0]; *rate = s == 0 ? U_tab[1] : 0; return; }
    if (s >= U_n - 1) { *ref = U_tab[2 * (U_n - 1)]; *rate = 0; return; }
    long i = (long)s;
    double w = s - i;
    *ref = U_tab[2 * i] + w * (U_tab[2 * i + 2] - U_tab[2 * i]);           /* linear interpolation */
    *rate = U_tab[2 * i + 1] + w * (U_tab[2 * i + 3] - U_tab[2 * i + 1]);
}

/* the object's push along -x on the handle at x, moving at v (N, >= 0); updates the contact bit */
static double target_force(double x, double v) {
    if (isnan(T_at) || x <= T_at) { if (!isnan(T_on) && contact && x - T_at < T_off) contact = 0; return 0.0; }
    double d = x - T_at, f = T_curve[1];
    if (d >= T_curve[2 * (T_n - 1)]) f = T_curve[2 * T_n - 1];
    else for (int i = 0; i + 1 < T_n; i++)
        if (d < T_curve[2 * i + 2]) {
            double w = (d - T_curve[2 * i]) / (T_curve[2 * i + 2] - T_curve[2 * i]);
            f = T_curve[2 * i + 1] + (w < 0 ? 0 : w) * (T_curve[2 * i + 3] - T_curve[2 * i + 1]);
            break;
        }
    if (!isnan(T_on)) { if (d >= T_on) contact = 1; else if (d < T_off) contact = 0; }
    f += T_damp * v;
    return f > 0 ? f : 0.0;
}

/* the position servo's force command at the firmware rate: PD, clamped to the frame's limit and F_max */
static double servo_force(void) {
    double f = S_kp * (S_ref - X) - S_kd * V, lim = S_limit > 0 && S_limit < P_fmax ? S_limit : P_fmax;
    if (fabs(f) > lim) { f = copysign(lim, f); servo_limited = 1; }
    FS = f;
    return f;
}

static void plant_advance(double dt) {
    if (dt <= 0) return;
    long n = (long)ceil(dt / P_sub - 1e-9);
    if (n < 1) n = 1;
    double h = dt / n;
    double tau = P_bw > 0 ? 1.0 / (2 * M_PI * P_bw) : 0;
    double lag = tau > 0 ? 1.0 - exp(-h / tau) : 1.0;   /* exact first-order response to a held input */
    double f = enabled ? f_cmd : 0.0;
    for (long j = 0; j < n; j++) {
        double t = TP + j * h, ref, rate;
        if (enabled && pos_mode) f = servo_force();
        FM += (f - FM) * lag;                            /* f_m' = (F - f_m) / tau */
        user_reference(t, &ref, &rate);
        FU = U_mode == 1 ? ref : U_k * (ref - X) + U_b * (rate - V);
        FT = target_force(X, V);
        double a = (FU + FM - FT - P_damp * V) / P_mass; /* m x'' = f_user + f_m - f_object - b x' */
        V += a * h;                                      /* semi-implicit Euler */
        X += V * h;
    }
    TP += dt;
}

static void plant_to_now(void) { if (!P_frames_clock) plant_advance(now_s() - TP); }

static long k_state = 0;

/* probing: the reply to POSITION (and STATE in position mode) */
static void send_probe_state(uint32_t seq, long counts, int status) {
    uint8_t p[24];
    status |= (contact ? ST_CONTACT : 0) | (servo_limited ? ST_SERVO_LIMIT : 0);
    put_u32(p, seq);
    put_u32(p + 4, (uint32_t)(int64_t)llround(TP * 1e6));
    put_u32(p + 8, (uint32_t)(int32_t)counts);
    put_u32(p + 12, (uint32_t)(int32_t)llround((enabled && pos_mode ? FS : 0.0) * 1e6));
    put_u32(p + 16, (uint32_t)(int32_t)llround(FT * 1e6));
    put_u16(p + 20, (uint32_t)status);
    put_u16(p + 22, (uint32_t)(n_crc & 0xFFFF));
    k_state++;
    if (F_drop > 0 && k_state % F_drop == 0) { n_dropped++; return; }
    send_frame(T_PROBE_STATE, p, 24, F_corrupt > 0 && k_state % F_corrupt == 0);
    n_state++;
    wd_latched = 0; rx_error_latched = 0; servo_limited = 0;
}

static void send_state(uint32_t seq) {
    static long k = 0;
    uint8_t p[20];
    long counts = (long)floor(X * P_cpm + 0.5) - zero_counts;  /* counts = floor(x cpm + 0.5) */
    double f = enabled ? f_cmd : 0.0;
    int status = (enabled ? ST_ENABLED : 0) | (wd_latched ? ST_WATCHDOG : 0) | (clamped ? ST_CLAMPED : 0)
                 | (rx_error_latched ? ST_RX_ERROR : 0) | (faulted ? ST_FAULT : 0);
    if (pos_mode || (faulted && probing)) {
        send_probe_state(seq, counts, status);
        return;
    }
    put_u32(p, seq);
    put_u32(p + 4, (uint32_t)(int64_t)llround(TP * 1e6));
    put_u32(p + 8, (uint32_t)(int32_t)counts);
    put_u32(p + 12, (uint32_t)(int32_t)llround(f * 1e6));
    put_u16(p + 16, (uint32_t)status);
    put_u16(p + 18, (uint32_t)(n_crc & 0xFFFF));
    k++;
    if (F_drop > 0 && k % F_drop == 0) { n_dropped++; return; }
    int corrupt = F_corrupt > 0 && k % F_corrupt == 0;
    if (F_late > 0 && k % F_late == 0) {
        struct timespec d = {F_late_us / 1000000, (long)(F_late_us % 1000000) * 1000};
        nanosleep(&d, NULL);
        n_late++;
    }
    n_corrupt += corrupt;
    send_frame(T_STATE, p, 20, corrupt);
    n_state++;
    wd_latched = 0;
    rx_error_latched = 0;
}

static void send_info(void) {
    uint8_t p[34 + 24];
    size_t nl = strlen(P_name) > 24 ? 24 : strlen(P_name);
    put_u16(p, 1);
    double v[8] = {P_cpm, P_fmax, P_fcont, P_ws_lo, P_ws_hi, P_damp, P_mass, P_rate};
    for (int i = 0; i < 8; i++) put_f32(p + 2 + 4 * i, v[i]);
    memcpy(p + 34, P_name, nl);
    send_frame(T_INFO, p, (uint8_t)(34 + nl), 0);
}

/* --- the protocol: one good frame --- */
static void handle_frame(uint8_t type, const uint8_t *p, uint8_t len) {
    n_rx++;
    if (F_slow_us > 0 && ever_enabled && !stop_flag) {  /* a slow firmware: every frame takes this long */
        struct timespec d = {F_slow_us / 1000000, (F_slow_us % 1000000) * 1000};
        nanosleep(&d, NULL);
    }
    switch (type) {
    case T_HELLO:
        if (len != 2) { send_error(type, E_LENGTH); return; }
        if ((p[0] | p[1] << 8) != 1) { send_error(type, E_VERSION); return; }
        send_info();
        return;
    case T_CONFIG: {
        if (len != 4) { send_error(type, E_LENGTH); return; }
        int w = p[0] | p[1] << 8, s = p[2] | p[3] << 8;
        if (w < 2 || w > 10000 || s > 10000) { send_error(type, E_CONFIG); return; }
        wd_ms = w; stream_hz = s;
        send_ack(type);
        return;
    }
    case T_ENABLE:
        if (len != 0) { send_error(type, E_LENGTH); return; }
        plant_to_now();
        if (faulted) { send_error(type, E_NOT_ENABLED); return; }
        enabled = 1; ever_enabled = 1; wd_armed = 0; f_cmd = 0; pos_mode = 0; enable_t = now_s(); next_stream_t = enable_t;
        send_ack(type);
        send_state(0);                                   /* where the handle is before the first FORCE */
        return;
    case T_FORCE: {
        if (len != 8) { send_error(type, E_LENGTH); return; }
        if (!enabled) { send_error(type, E_NOT_ENABLED); return; }
        if (P_frames_clock) plant_advance(P_frame_dt);  /* frame clock: the last force held one period */
        else plant_to_now();                             /* wall clock: the last force held until now */
        last_seq = get_u32(p);
        double f = (int32_t)get_u32(p + 4) * 1e-6;
        clamped = fabs(f) > P_fmax;
        if (clamped) f = copysign(P_fmax, f);
        n_force++;
        wd_armed = 1;
        last_force_t = now_s();
        f_cmd = f;
        pos_mode = 0;
        if (stream_hz == 0) send_state(last_seq);       /* lockstep: the sample now, the force now applied */
        return;
    }
    case T_POSITION: {
        if (len != 12) { send_error(type, E_LENGTH); return; }
        probing = 1;
        if (faulted) { send_state(get_u32(p)); return; }          /* force off: PROBE_STATE says why */
        if (!enabled) { send_error(type, E_NOT_ENABLED); return; }
        if (P_frames_clock) plant_advance(P_frame_dt);
        else plant_to_now();
        last_seq = get_u32(p);
        double x = ((int32_t)get_u32(p + 4) + zero_counts) / P_cpm;
        S_ref = x < P_ws_lo ? P_ws_lo : x > P_ws_hi ? P_ws_hi : x;   /* the servo stays in the workspace */
        S_limit = get_u32(p + 8) * 1e-6;
        n_force++;
        wd_armed = 1;
        last_force_t = now_s();
        pos_mode = 1;
        if (stream_hz == 0) send_state(last_seq);
        return;
    }
    case T_AXIS: {
        if (P_axis < 0) { send_error(type, E_TYPE); return; }   /* a firmware from before the frame */
        if (len != 0) { send_error(type, E_LENGTH); return; }
        uint8_t kind = (uint8_t)P_axis;
        send_frame(T_AXIS_INFO, &kind, 1, 0);
        return;
    }
    case T_SET_ZERO:
        if (len != 0) { send_error(type, E_LENGTH); return; }
        plant_to_now();
        zero_counts = (long)floor(X * P_cpm + 0.5);
        send_ack(type);
        return;
    case T_DISABLE:
        if (len != 0) { send_error(type, E_LENGTH); return; }
        plant_to_now();
        enabled = 0; f_cmd = 0; wd_armed = 0; pos_mode = 0;
        n_disable++;
        send_ack(type);
        return;
    default:
        send_error(type, E_TYPE);
    }
}

/* --- the firmware's main loop: parse, watchdog, stream, faults --- */
static uint8_t rx[4096];
static size_t rx_n = 0;

static void parse_rx(void) {
    size_t i = 0;
    for (;;) {
        while (i + 1 < rx_n && !(rx[i] == SYNC0 && rx[i + 1] == SYNC1)) i++;
        if (i + 4 > rx_n) break;
        uint8_t len = rx[i + 3];
        if (len > MAX_PAYLOAD) { n_crc++; rx_error_latched = 1; i += 2; continue; }
        if (i + 6 + len > rx_n) break;
        uint16_t got = rx[i + 4 + len] | rx[i + 5 + len] << 8;
        if (crc16(rx + i + 2, (size_t)len + 2) != got) { n_crc++; rx_error_latched = 1; i += 2; continue; }
        handle_frame(rx[i + 2], rx + i + 4, len);
        i += 6 + (size_t)len;
    }
    if (i > rx_n) i = rx_n;
    memmove(rx, rx + i, rx_n - i);
    rx_n -= i;
}

static void watchdog(double t) {
    if (enabled && wd_armed && (t - last_force_t) * 1e3 > wd_ms) {
        plant_to_now();
        f_cmd = 0;                                        /* no FORCE for the watchdog time: force off */
        pos_mode = 0;                                     /* and no position servo */
        wd_armed = 0;                                     /* re-armed by the next FORCE */
        wd_latched = 1;
        n_wd++;
        fprintf(stderr, "hsp_emu: watchdog at %.1f ms: no FORCE for %d ms, force zeroed\n",
                (t - enable_t) * 1e3, wd_ms);
    }
}

static void summary(const char *why) {
    fprintf(stderr, "hsp_emu: summary why=%s frames_rx=%ld forces=%ld crc_errors=%ld states=%ld dropped=%ld "
            "corrupted=%ld late=%ld watchdog_trips=%ld silent_ms=%ld disables=%ld\n", why, n_rx, n_force, n_crc,
            n_state, n_dropped, n_corrupt, n_late, n_wd, n_silent_ms, n_disable);
    fflush(stderr);
}

static void on_signal(int sig) { (void)sig; stop_flag = 1; }

static int load_user(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    fseek(f, 0, SEEK_END);
    long bytes = ftell(f);
    fseek(f, 0, SEEK_SET);
    U_n = bytes / 16;
    U_tab = malloc((size_t)(U_n > 0 ? U_n : 1) * 16);
    long got = (long)fread(U_tab, 16, (size_t)U_n, f);
    fclose(f);
    return got == U_n && U_n >= 1 ? 0 : -1;
}

/* "d0,f0,d1,f1,...": the number of pairs, or -1 when malformed (d must start at 0 and rise) */
static int parse_curve(const char *text) {
    int n = 0;
    char *end;
    for (const char *c = text; *c && n < 2 * MAX_CURVE; c = *end ? end + 1 : end) {
        T_curve[n++] = strtod(c, &end);
        if (end == c || (*end && *end != ',')) return -1;
    }
    if (n % 2 || n == 0 || T_curve[0] != 0) return -1;
    for (int i = 2; i < n; i += 2) if (!(T_curve[i] > T_curve[i - 2])) return -1;
    return n / 2;
}

static int open_own_pty(void) {
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    if (m < 0 || grantpt(m) || unlockpt(m)) return -1;
    int s = open(ptsname(m), O_RDWR | O_NOCTTY);
    struct termios tio;
    if (s < 0 || tcgetattr(s, &tio)) return -1;
    cfmakeraw(&tio);
    tcsetattr(s, TCSANOW, &tio);
    printf("%s\n", ptsname(m));
    fflush(stdout);
    close(s);
    return m;
}

int main(int argc, char **argv) {
    const char *user = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : "0";
#define OPT(name, stmt) if (!strcmp(a, name)) { stmt; i++; continue; }
        OPT("--fd", fd = atoi(v)) OPT("--mass", P_mass = atof(v)) OPT("--damping", P_damp = atof(v))
        OPT("--fmax", P_fmax = atof(v)) OPT("--fcont", P_fcont = atof(v)) OPT("--rate", P_rate = atof(v))
        OPT("--bandwidth-hz", P_bw = atof(v)) OPT("--cpm", P_cpm = atof(v)) OPT("--ws-lo", P_ws_lo = atof(v))
        OPT("--ws-hi", P_ws_hi = atof(v)) OPT("--name", P_name = v) OPT("--substep", P_sub = atof(v))
        OPT("--plant-clock", P_frames_clock = !strcmp(v, "frames")) OPT("--frame-dt-us", P_frame_dt = atof(v) * 1e-6)
        OPT("--user", user = v) OPT("--user-mode", U_mode = atoi(v)) OPT("--user-k", U_k = atof(v))
        OPT("--user-b", U_b = atof(v)) OPT("--user-t0", U_t0 = atof(v)) OPT("--user-dt", U_dt = atof(v))
        OPT("--user-period", U_period = atof(v)) OPT("--x0", U_x0 = atof(v))
        OPT("--drop-every", F_drop = atoi(v)) OPT("--corrupt-every", F_corrupt = atoi(v))
        OPT("--late-every", F_late = atoi(v)) OPT("--late-us", F_late_us = atoi(v))
        OPT("--silence-at-ms", F_silence_at = atof(v)) OPT("--silence-ms", F_silence_ms = atof(v))
        OPT("--unplug-at-ms", F_unplug_at = atof(v)) OPT("--slow-us", F_slow_us = atol(v))
        OPT("--fault-at-ms", F_fault_at = atof(v)) OPT("--servo-kp", S_kp = atof(v)) OPT("--servo-kd", S_kd = atof(v))
        OPT("--target-at", T_at = atof(v)) OPT("--target-damping", T_damp = atof(v))
        OPT("--contact-at", T_on = atof(v)) OPT("--release-at", T_off = atof(v))
        OPT("--target-curve", T_n = parse_curve(v))
        OPT("--inertia", P_mass = atof(v)) OPT("--counts-per-rad", P_cpm = atof(v))
        OPT("--axis", P_axis = !strcmp(v, "rotary") ? 1 : !strcmp(v, "none") ? -1 : !strcmp(v, "linear") ? 0 : -2)
        fprintf(stderr, "hsp_emu: unknown option %s\n", a);
        return 2;
    }
    if (P_axis == -2) { fprintf(stderr, "hsp_emu: --axis: linear, rotary or none\n"); return 2; }
    if (T_n < 0) { fprintf(stderr, "hsp_emu: --target-curve: 1 to %d pairs d,f with d rising from 0\n", MAX_CURVE); return 2; }
    if (!isnan(T_at) && T_n == 0) { T_n = 1; T_curve[0] = 0; T_curve[1] = 0; }
    if (isnan(T_off)) T_off = T_on;
    if (user && load_user(user)) { fprintf(stderr, "hsp_emu: cannot read user table %s\n", user); return 2; }
    if (P_mass <= 0 || P_sub <= 0 || P_cpm <= 0 || P_frame_dt <= 0) { fprintf(stderr, "hsp_emu: bad plant\n"); return 2; }
    X = U_x0;
    if (fd < 0 && (fd = open_own_pty()) < 0) { perror("hsp_emu: pty"); return 2; }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    signal(SIGPIPE, SIG_IGN);
    t0_wall = 0;
    t0_wall = now_s();
    const char *why = "signal";
    while (!stop_flag) {
        double t = now_s(), ta = (t - enable_t) * 1e3;
        int after_enable = ever_enabled;
        if (F_unplug_at >= 0 && after_enable && ta >= F_unplug_at) {
            fprintf(stderr, "hsp_emu: unplugged at %.1f ms\n", ta);
            why = "unplug";
            break;
        }
        if (F_fault_at >= 0 && after_enable && ta >= F_fault_at && !faulted) {
            plant_to_now();
            faulted = 1; enabled = 0; pos_mode = 0; f_cmd = 0;      /* the amplifier's fault: force off */
            fprintf(stderr, "hsp_emu: device fault at %.1f ms, force off\n", ta);
        }
        if (F_silence_at >= 0 && after_enable && ta >= F_silence_at && (F_silence_ms < 0 || ta < F_silence_at + F_silence_ms)) {
            struct timespec d = {0, 1000000};
            nanosleep(&d, NULL);                          /* deaf and mute; the watchdog still runs */
            n_silent_ms++;
            watchdog(now_s());
            continue;
        }
        struct pollfd pfd = {fd, POLLIN, 0};
        int r = poll(&pfd, 1, 1);
        if (r > 0 && (pfd.revents & POLLIN)) {
            ssize_t n = read(fd, rx + rx_n, sizeof rx - rx_n);
            if (n > 0) { rx_n += (size_t)n; parse_rx(); if (rx_n == sizeof rx) rx_n = 0; }
            else if (n < 0 && errno != EAGAIN && errno != EINTR) { why = "hangup"; break; }
        } else if (r > 0 && (pfd.revents & (POLLHUP | POLLERR))) {
            struct timespec d = {0, 1000000};              /* the host closed the line: wait for a new open */
            nanosleep(&d, NULL);
        }
        t = now_s();
        watchdog(t);
        if (enabled && stream_hz > 0 && t >= next_stream_t) {
            plant_to_now();
            send_state(last_seq);
            next_stream_t += 1.0 / stream_hz;
            if (next_stream_t < t) next_stream_t = t;
        }
    }
    summary(why);
    close(fd);
    return 0;
}
