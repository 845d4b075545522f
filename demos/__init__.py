"""Demos: the end-to-end haptic camera pipeline (``hapticam demo``) and interactive pygame windows."""
