"""Debian's Chromium driven by Playwright for Python (never `playwright install`): shared by the
Space's browser tests."""
import os
import shutil
import socket

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]


def chromium_missing() -> str:
    """Why browser tests cannot run here, or an empty string."""
    if not os.path.exists(CHROMIUM):
        return "Debian chromium is not installed (make test installs it when run as root)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright (python) is not installed"
    return ""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
