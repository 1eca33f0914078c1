"""Debian's headless Chromium as every browser test launches it (Playwright drives it; no
browser download). One place for the binary and its flags: no background traffic, no
component updates, no first-run pages, so every request a test sees is the page's own."""
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]


def launch(playwright):
    """A Chromium browser from a started ``sync_playwright()``."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)


def settled(page, timeout: float = 30_000) -> None:
    """Wait until the page has settled (ui/js/site.js sets <html data-settled> once it has
    loaded, its diagrams are drawn and the layout after them has run), not a fixed time."""
    try:
        page.wait_for_selector("html[data-settled]", state="attached", timeout=timeout)
    except Exception as exc:        # Playwright's TimeoutError, said as what did not happen
        raise AssertionError(f"{page.url} did not settle in {timeout / 1000:.0f} s (no load "
                             f"event, or its diagrams never drawn): {exc}") from None
