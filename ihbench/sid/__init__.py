"""Semantic interruption detection (SID-Bench): detectors, prediction files and scoring.

    from ihbench.sid.detectors import get_detector, run_detector
    from ihbench.sid.evaluate_sid import score_both
"""
