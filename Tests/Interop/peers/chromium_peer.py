#!/usr/bin/env python3
"""Headless Chromium (Debian's chromium + chromium-driver, driven by selenium) on the service's
browser page `/r/<rtcId>` with a fake camera and microphone. Prints ONE JSON line on stdout with
the page's final `ecvTest.state()` and `ecvTest.stats()` (and `ecvTest.frames()` with `?watch=frames`).

Progress goes to stderr, one line each: `joined initiator=<true|false> client=<id>`, `connected`,
`channel-open <label>`, `summary-printed`. After the summary the peer waits for its stdin to close
(the test stops its own recording first), then closes the page (bye, leave) and the browser.
Every step is bounded; exit status 0 when media flowed and the channel opened, 1 otherwise.
"""
import argparse
import base64
import json
import os
import urllib.parse
import signal
import sys
import threading
import time
import wave

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

CHROMIUM = os.environ.get("ECV_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("ECV_CHROMEDRIVER", "/usr/bin/chromedriver")


def progress(text):
    print(text, file=sys.stderr, flush=True)


def start_browser(timeout, page=None, audio_file=None, video_file=None):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    if audio_file:
        # The fake microphone plays this WAV file (looped) instead of its beep.
        options.add_argument("--use-file-for-fake-audio-capture=%s" % audio_file)
    if video_file:
        # The fake camera plays this Y4M file (looped) instead of its pattern.
        options.add_argument("--use-file-for-fake-video-capture=%s" % video_file)
    for flag in ("--headless=new", "--no-sandbox", "--use-fake-device-for-media-stream=fps=30", "--use-fake-ui-for-media-stream",
                 "--autoplay-policy=no-user-gesture-required", "--disable-dev-shm-usage", "--disable-gpu",
                 "--no-first-run", "--disable-extensions", "--mute-audio"):
        options.add_argument(flag)
    # getUserMedia needs a secure context: loopback is one, a network lab's veth address is not.
    origin = urllib.parse.urlsplit(page or "http://127.0.0.1/")
    if origin.hostname not in ("127.0.0.1", "localhost", "::1"):
        options.add_argument("--unsafely-treat-insecure-origin-as-secure=%s://%s" % (origin.scheme, origin.netloc))
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # Its own process group, so the driver and every browser process it starts end together (`stop_group`).
    service = Service(executable_path=CHROMEDRIVER, popen_kw={"start_new_session": True})
    SERVICES.append(service)
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_page_load_timeout(timeout)
    driver.set_script_timeout(timeout)
    return driver, service


SERVICES = []  # the chromedriver service, whose process leads the browser's process group


def stop_group():
    for service in SERVICES:
        process = getattr(service, "process", None)
        if process is None:
            continue
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except OSError:
            pass


def die(*_):
    stop_group()
    os._exit(3)


class Interrupted(Exception):
    """The test gave up waiting (SIGTERM): report what the page has, then close."""


def interrupt(*_):
    signal.signal(signal.SIGTERM, die)  # a second SIGTERM ends everything at once
    raise Interrupted("interrupted by the test")


def page_state(driver):
    return driver.execute_script("return window.ecvTest ? window.ecvTest.state() : null;")


def page_stats(driver):
    return driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "window.ecvTest.stats().then(done, (error) => done({error: String(error)}));")


def page_log(driver):
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('#log li')).map((li) => li.textContent).reverse();")


def wait_until(what, deadline, condition):
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise TimeoutError("timed out waiting for " + what)


# The remote stream's audio as the page receives it, resampled by WebAudio to 16 kHz mono and kept
# as 16-bit samples until `RECORDED_AUDIO` hands them over (base64), for the test to transcribe.
RECORD_AUDIO = """
const done = arguments[arguments.length - 1];
(async () => {
  // The first remote audio track the page's peer connection received (see WATCH_TRACKS).
  for (let i = 0; i < 50 && window.ecvAudioTracks.length == 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
  const track = window.ecvAudioTracks[0];
  if (!track) return done('no remote audio track');
  // Chromium feeds a remote track to WebAudio only while a media element plays it too (the page's
  // own element may show another stream); the browser runs with --mute-audio, so nothing is heard.
  const player = new Audio();
  player.srcObject = new MediaStream([track]);
  await player.play();
  const context = new AudioContext({sampleRate: 16000});
  await context.resume();
  const source = context.createMediaStreamSource(new MediaStream([track]));
  const node = context.createScriptProcessor(4096, 1, 1);
  const chunks = [];
  node.onaudioprocess = (event) => {
    const input = event.inputBuffer.getChannelData(0);
    const samples = new Int16Array(input.length);
    for (let i = 0; i < input.length; i++) samples[i] = Math.max(-32768, Math.min(32767, Math.round(input[i] * 32767)));
    if (chunks.length < 2000) chunks.push(samples);
  };
  source.connect(node);
  node.connect(context.destination);
  window.ecvRecordedAudio = () => {
    let count = 0;
    for (const chunk of chunks) count += chunk.length;
    const all = new Int16Array(count);
    let offset = 0;
    for (const chunk of chunks) { all.set(chunk, offset); offset += chunk.length; }
    const bytes = new Uint8Array(all.buffer);
    let text = '';
    for (let i = 0; i < bytes.length; i += 8192) text += String.fromCharCode.apply(null, bytes.subarray(i, i + 8192));
    return {rate: context.sampleRate, data: btoa(text)};
  };
  done('recording');
})().catch((error) => done('failed: ' + error));
"""
# Installed before the page's own script: every remote audio track any peer connection receives,
# whichever stream the page shows (its video element may hold a stream without the audio).
WATCH_TRACKS = """
window.ecvAudioTracks = [];
const OriginalPeerConnection = window.RTCPeerConnection;
window.RTCPeerConnection = function (...args) {
  const connection = new OriginalPeerConnection(...args);
  connection.addEventListener('track', (event) => { if (event.track.kind == 'audio') window.ecvAudioTracks.push(event.track); });
  return connection;
};
window.RTCPeerConnection.prototype = OriginalPeerConnection.prototype;
"""
RECORDED_AUDIO = "return window.ecvRecordedAudio ? window.ecvRecordedAudio() : null;"


def save_recorded_audio(driver, path, result):
    recorded = driver.execute_script(RECORDED_AUDIO)
    if not recorded:
        result["errors"].append("no audio was recorded")
        return
    pcm = base64.b64decode(recorded["data"])
    with wave.open(path, "wb") as file:
        file.setnchannels(1)
        file.setsampwidth(2)
        file.setframerate(int(recorded["rate"]))
        file.writeframes(pcm)
    result["recordedAudioSeconds"] = round(len(pcm) / 2 / recorded["rate"], 2)


def parse_steps(args):
    steps = [(float(t), "send", text) for t, text in (s.split(":", 1) for s in args.send)]
    steps += [(float(t), "mute", what) for t, what in (s.split(":", 1) for s in args.mute)]
    if args.hangup_at is not None:
        steps.append((args.hangup_at, "hangup", ""))
    return sorted(steps)


def run(driver, args, result):
    if args.record_audio:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": WATCH_TRACKS})
    driver.get(args.page)
    deadline = time.monotonic() + args.connect_timeout
    state = wait_until("the page to join", deadline, lambda: (page_state(driver) or {}).get("clientId") and page_state(driver))
    progress("joined initiator=%s client=%s" % ("true" if state.get("initiator") else "false", state["clientId"]))
    wait_until("connected and an open text channel", deadline, lambda: (lambda s: s and s["connectionState"] == "connected"
               and s["channel"] and s["channel"]["state"] == "open")(page_state(driver)))
    state = page_state(driver)
    progress("connected")
    progress("channel-open " + state["channel"]["label"])
    if args.record_audio:
        recording = driver.execute_async_script(RECORD_AUDIO)
        if recording != "recording":
            raise RuntimeError("recording the received audio: %s" % recording)
        progress("recording-audio")
    started = time.monotonic()
    for at, kind, value in parse_steps(args):
        time.sleep(max(0, started + at - time.monotonic()))
        if kind == "send":
            driver.execute_script("return window.ecvTest.send(arguments[0]);", value)
        elif kind == "mute":
            media, muted = value.split(":")
            driver.execute_script("return window.ecvTest.mute(arguments[0], arguments[1]);", media, muted == "muted")
        else:
            driver.execute_async_script("const done = arguments[arguments.length - 1];"
                                        "window.ecvTest.hangup().then(done, (e) => done(String(e)));")
    while time.monotonic() < started + args.duration:
        if page_state(driver)["ended"]:
            result["errors"].append("the call ended early: " + page_state(driver)["status"])
            break
        time.sleep(0.2)
    result["mediaSeconds"] = round(time.monotonic() - started, 2)
    result["ok"] = True


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--page", required=True, help="the page URL, e.g. http://192.0.2.2:8080/r/rtc-1?role=caller&codec=VP8")
    parser.add_argument("--duration", type=float, default=6.0, help="seconds of media after the channel opened")
    parser.add_argument("--connect-timeout", type=float, default=30.0)
    parser.add_argument("--send", action="append", default=[], help="SECONDS:TEXT after the channel opened")
    parser.add_argument("--mute", action="append", default=[], help="SECONDS:audio|video:muted|unmuted")
    parser.add_argument("--hangup-at", type=float, default=None, help="SECONDS: hang up through the page")
    parser.add_argument("--linger", type=float, default=20.0, help="longest wait for stdin to close after the summary")
    parser.add_argument("--audio-file", default=None, help="a WAV file the fake microphone plays (looped)")
    parser.add_argument("--video-file", default=None, help="a Y4M file the fake camera plays (looped)")
    parser.add_argument("--record-audio", default=None, help="a WAV file (16 kHz mono) for the audio received from the channel's opening on")
    args = parser.parse_args()

    # Whatever happens, the browser does not outlive this process by more than the hard limit.
    hard_limit = args.connect_timeout + args.duration + args.linger + 60
    signal.signal(signal.SIGALRM, die)
    signal.signal(signal.SIGTERM, interrupt)
    signal.alarm(int(hard_limit))

    result = {"peer": "chromium", "page": args.page, "ok": False, "errors": []}
    driver = service = None
    try:
        driver, service = start_browser(args.connect_timeout, args.page, args.audio_file, args.video_file)
        run(driver, args, result)
    except Exception as error:
        result["errors"].append("%s: %s" % (type(error).__name__, str(error).splitlines()[0] if str(error) else ""))
    if driver is not None:
        try:
            result["state"] = page_state(driver)
            result["stats"] = page_stats(driver)
            result["log"] = page_log(driver)[-40:]
            # With `?watch=frames`: [wall-clock ms, framesDecoded] every 50 ms.
            frames = driver.execute_script("return window.ecvTest.frames ? window.ecvTest.frames() : null;")
            if frames is not None:
                result["frames"] = frames
            if args.record_audio:
                save_recorded_audio(driver, args.record_audio, result)
        except Exception as error:
            result["errors"].append("reading the page: %s" % error)
        stats = result.get("stats") or {}
        decoded = ((stats.get("video") or {}).get("inbound") or {}).get("framesDecoded", 0)
        result["ok"] = result["ok"] and decoded > 0
    signal.signal(signal.SIGTERM, die)  # from now on SIGTERM ends the browser at once
    print(json.dumps(result), flush=True)
    progress("summary-printed")
    if driver is not None:
        if not (result.get("state") or {}).get("ended"):
            closed = threading.Event()
            threading.Thread(target=lambda: (sys.stdin.read(), closed.set()), daemon=True).start()
            if not closed.wait(args.linger):
                progress("stdin stayed open; leaving anyway")
        try:
            driver.execute_script("window.dispatchEvent(new Event('pagehide'));")
            time.sleep(0.3)  # the page's bye and leave beacons go out
        except Exception:
            pass
        try:
            driver.quit()
        except Exception:
            pass
    stop_group()
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
