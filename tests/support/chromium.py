"""Debian's headless Chromium as every browser test launches it (Playwright drives it; no
browser download). One place for the binary and its flags: no background traffic, no
component updates, no first-run pages, so every request a test sees is the page's own."""
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]


def launch(playwright):
    """A Chromium browser from a started ``sync_playwright()``."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
