#!/usr/bin/env python3
"""Headless Chromium (Debian's chromium + chromium-driver, driven by selenium) on the reference
service's PeerJS client page `<path>/client?key=&id=&call=|` (a minimal PeerJS-protocol client in
plain JavaScript, Sources/ECVService/PeerServer/PeerClientPage.swift) with a fake camera and
microphone. Waits until the page says it is done, then prints ONE JSON line on stdout: the page's
`peerTest.summary()`. Progress goes to stderr (`loaded`, `open`, `done`). Every step is bounded;
exit status 0 when the page opened and decoded video, 1 otherwise.
"""
import argparse
import json
import signal
import sys
import time

# The browser as the room page's driver starts it: same flags, same process group, same kill.
from chromium_peer import start_browser, stop_group


def progress(text):
    print(text, file=sys.stderr, flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--page", required=True, help="e.g. http://127.0.0.1:8080/peerjs/client?key=demo&id=chrome&call=swift")
    parser.add_argument("--timeout", type=float, default=60.0, help="longest wait for the page to finish")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: (stop_group(), sys.exit(1)))
    driver, _ = start_browser(args.timeout)
    summary = {"ok": False, "errors": ["the page did not finish"]}
    try:
        driver.get(args.page)
        progress("loaded")
        deadline = time.time() + args.timeout
        opened = False
        while time.time() < deadline:
            state = driver.execute_script("return window.peerTest ? [window.peerTest.summary().opened, window.peerTest.done()] : [false, false]")
            if state[0] and not opened:
                opened = True
                progress("open")
            if state[1]:
                break
            time.sleep(0.2)
        summary = driver.execute_script("return window.peerTest ? window.peerTest.summary() : null") or summary
        progress("done")
    finally:
        print(json.dumps(summary), flush=True)
        try:
            driver.quit()
        except Exception:  # the browser may already be gone; the group kill below ends it either way
            pass
        stop_group()
    sys.exit(0 if summary.get("ok") else 1)


if __name__ == "__main__":
    main()
