#!/usr/bin/env python3
"""Sorts the ThreadSanitizer reports of a `make sanitize` run (Tests/Sanitize/run.sh).

Swift 6.3's `Synchronization.Mutex` on Linux locks with a futex inside the uninstrumented
Synchronization library, so TSan sees no happens-before between two `withLock` bodies and reports
every Mutex-protected value touched from two threads. Such a report, where *every* racing access
is inside a closure passed to `withLock` (mangled `...zYu[K]YTXEfU...`: `(inout sending Value)
throws(E) -> sending Result`) *of the same type* (one type's own Mutex; for the shared `Locked`
box, the type that calls `Locked.withLock`), is counted as hidden by the toolchain and not shown.
A report with an access outside any lock is exactly the race TSan is for (a missing lock), and
one whose accesses hold locks of different types may be a wrong lock: both are shown and fail
the run, as is every other report tsan.supp does not cover.

Usage: tsan-triage.py REPORT...   (TSan log_path files; prints a summary line, then the kept
reports' summaries; exit 1 if any is kept)
"""
import re
import sys

LOCK_BODY = re.compile(r"zYuK?YTXEfU")
ACCESS = re.compile(r"^  (Previous )?(read|write|atomic read|atomic write|modifying access|read-only access)", re.I)
FRAME = re.compile(r"^\s+#\d+ (\S+)")


def reports(text):
    for block in text.split("==================\n"):
        if "WARNING: ThreadSanitizer:" in block:
            yield block


def access_stacks(block):
    stacks, current = [], None
    for line in block.splitlines():
        if ACCESS.match(line):
            current = []
            stacks.append(current)
        elif current is not None:
            frame = FRAME.match(line)
            if frame:
                current.append(frame.group(1))
            elif not line.strip():
                current = None
    return stacks


def owner(symbol):
    """`$s9GStreamer6LockedC…` → "GStreamer.Locked": the module and type a mangled symbol is in."""
    match = re.match(r"\$s(\d+)", symbol)
    if not match:
        return None
    position = match.end()
    module = symbol[position:position + int(match.group(1))]
    position += int(match.group(1))
    match = re.match(r"(\d+)", symbol[position:])
    if not match:
        return module
    return module + "." + symbol[position + match.end():position + match.end() + int(match.group(1))]


def lock_owner(stack):
    """The type whose Mutex the innermost `withLock` body of `stack` runs under, or None."""
    for index, frame in enumerate(stack):
        if LOCK_BODY.search(frame):
            found = owner(frame)
            if found == "GStreamer.Locked":
                # A shared `Locked` box: the type that called `Locked.withLock` owns it.
                found = next((owner(caller) for caller in stack[index + 1:]
                              if owner(caller) not in (None, "GStreamer.Locked")), None)
            return found
    return None


def main():
    text = "".join(open(path, errors="replace").read() for path in sys.argv[1:])
    hidden, kept = 0, []
    for block in reports(text):
        stacks = access_stacks(block)
        owners = {lock_owner(stack) for stack in stacks}
        if stacks and None not in owners and len(owners) == 1:
            hidden += 1
        else:
            kept.append(block)
    summaries = {}
    for block in kept:
        match = re.search(r"SUMMARY: ThreadSanitizer: (.*)", block)
        key = match.group(1) if match else block.splitlines()[0]
        summaries[key] = summaries.get(key, 0) + 1
    print(f"tsan: {hidden + len(kept)} report(s): {hidden} with every access inside one type's "
          f"Mutex.withLock (invisible to TSan, not shown), {len(kept)} kept")
    if kept:
        print("  kept (see the report files for the stacks):")
    for key, count in sorted(summaries.items(), key=lambda item: -item[1]):
        print(f"  {count} x {key}")
    return 1 if kept else 0


if __name__ == "__main__":
    sys.exit(main())
