#!/usr/bin/env python3
"""An aiortc peer that joins an ECV room over the AppRTC protocol (docs/protocol.md §2) as the
caller's or the agent's media end, sends synthetic video and audio, counts what it decodes,
plays the data-channel side of its role (§4), and prints ONE JSON summary line on stdout.

Progress goes to stderr, one line each: `joined initiator=<true|false> client=<id>`, `connected`,
`channel-open <label>`, `summary-printed`. After the summary the peer waits for its stdin to close
(the test stops its own recording first) and then says bye, leaves the room and exits.
Every wait is bounded; exit status 0 when media flowed and the channel opened, 1 otherwise.
"""
import argparse
import asyncio
import fractions
import json
import logging
import math
import signal
import sys
import time
import urllib.parse

import aiohttp
import av
from aiortc import (RTCConfiguration, RTCPeerConnection, RTCRtpSender, RTCSessionDescription,
                    MediaStreamTrack, VideoStreamTrack)
from aiortc.mediastreams import MediaStreamError
from aiortc.sdp import candidate_from_sdp

VIDEO_WIDTH, VIDEO_HEIGHT, VIDEO_FPS = 640, 480, 30
AUDIO_RATE, AUDIO_SAMPLES = 48000, 960  # 20 ms frames


KEYFRAME_REQUESTS = []  # wall-clock times (s) at which the other side asked our video sender for a key frame


def record_keyframe_requests():
    """Notes every PLI/FIR our video sender answers (aiortc has no public hook for it)."""
    answer = RTCRtpSender._send_keyframe

    def noted(sender):
        KEYFRAME_REQUESTS.append(time.time())
        answer(sender)

    RTCRtpSender._send_keyframe = noted


RECEIVE_TROUBLE = {"pliSent": 0, "depayloadErrors": 0, "firstDepayloadError": None, "videoFramesAssembled": 0,
                   "videoSequenceGaps": 0, "videoPayloadBytes": 0, "firstVideoGaps": []}


def record_receive_trouble():
    """Counts the PLIs our receivers send and the RTP payloads they cannot parse (aiortc logs
    those at debug level only, so a stream of unparsable packets would pass unseen)."""
    from aiortc import rtcrtpreceiver
    depayload, send_pli = rtcrtpreceiver.depayload, rtcrtpreceiver.RTCRtpReceiver._send_rtcp_pli

    def counted_depayload(codec, payload):
        try:
            return depayload(codec, payload)
        except ValueError as error:
            RECEIVE_TROUBLE["depayloadErrors"] += 1
            RECEIVE_TROUBLE["firstDepayloadError"] = RECEIVE_TROUBLE["firstDepayloadError"] or "%s: %s" % (codec.mimeType, error)
            raise

    async def counted_pli(receiver, media_ssrc):
        RECEIVE_TROUBLE["pliSent"] += 1
        await send_pli(receiver, media_ssrc)

    rtcrtpreceiver.depayload = counted_depayload
    rtcrtpreceiver.RTCRtpReceiver._send_rtcp_pli = counted_pli

    add, last = rtcrtpreceiver.JitterBuffer.add, {}

    def counted_add(buffer, packet):
        if getattr(buffer, "_is_video", False):
            previous = last.get(id(buffer))
            if previous is not None and packet.sequence_number != (previous + 1) % 65536:
                RECEIVE_TROUBLE["videoSequenceGaps"] += 1
                if len(RECEIVE_TROUBLE["firstVideoGaps"]) < 3:
                    RECEIVE_TROUBLE["firstVideoGaps"].append("%d->%d at packet %d" % (
                        previous, packet.sequence_number, RECEIVE_TROUBLE.get("videoPackets", 0)))
            RECEIVE_TROUBLE["videoPackets"] = RECEIVE_TROUBLE.get("videoPackets", 0) + 1
            last[id(buffer)] = packet.sequence_number
            RECEIVE_TROUBLE["videoPayloadBytes"] += len(packet.payload)
        pli, frame = add(buffer, packet)
        if frame is not None and getattr(buffer, "_is_video", False):
            RECEIVE_TROUBLE["videoFramesAssembled"] += 1
        return pli, frame

    rtcrtpreceiver.JitterBuffer.add = counted_add


def progress(text):
    print(text, file=sys.stderr, flush=True)


class MovingPattern(VideoStreamTrack):
    """A luma gradient that scrolls by 8 pixels a frame, with constant chroma: cheap and never static."""

    def __init__(self):
        super().__init__()
        row = bytes((x // 2) % 256 for x in range(VIDEO_WIDTH * 2))
        self._luma = b"".join(row[(y % VIDEO_WIDTH):(y % VIDEO_WIDTH) + VIDEO_WIDTH] for y in range(VIDEO_HEIGHT))
        self._chroma = bytes([128]) * (VIDEO_WIDTH * VIDEO_HEIGHT // 4)
        self._index = 0
        self.sent = 0

    async def recv(self):
        pts, time_base = await self.next_timestamp()
        shift = (self._index * 8) % len(self._luma)
        self._index += 1
        frame = av.VideoFrame(VIDEO_WIDTH, VIDEO_HEIGHT, "yuv420p")
        frame.planes[0].update(self._luma[shift:] + self._luma[:shift])
        frame.planes[1].update(self._chroma)
        frame.planes[2].update(self._chroma)
        frame.pts, frame.time_base = pts, time_base
        self.sent += 1
        return frame


class Tone(MediaStreamTrack):
    """A 440 Hz sine, 48 kHz mono s16, paced in real time in 20 ms frames."""

    kind = "audio"

    def __init__(self):
        super().__init__()
        period = AUDIO_RATE // 40  # 1200 samples hold exactly 11 cycles of 440 Hz: frames join without a click
        samples = [int(8000 * math.sin(2 * math.pi * 440 * i / AUDIO_RATE)) for i in range(AUDIO_SAMPLES + period)]
        self._pcm = b"".join(s.to_bytes(2, "little", signed=True) for s in samples)
        self._start = None
        self._pts = 0

    def _frame_bytes(self):
        offset = (self._pts % (AUDIO_RATE // 40)) * 2
        return self._pcm[offset:offset + AUDIO_SAMPLES * 2]

    async def recv(self):
        if self.readyState != "live":
            raise MediaStreamError
        if self._start is None:
            self._start = time.monotonic()
        else:
            self._pts += AUDIO_SAMPLES
            wait = self._start + self._pts / AUDIO_RATE - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
        frame = av.AudioFrame(format="s16", layout="mono", samples=AUDIO_SAMPLES)
        frame.planes[0].update(self._frame_bytes())
        frame.pts, frame.sample_rate = self._pts, AUDIO_RATE
        frame.time_base = fractions.Fraction(1, AUDIO_RATE)
        return frame


class FlashBeepClock:
    """One capture clock for the lip-sync signal: a 3-frame white flash half-way through each second,
    and a 100 ms 1 kHz beep starting with it (as the SDK tests' FlashBeep), both placed by their
    capture time (the monotonic clock Tone paces by), so the sender's own timestamps carry the
    signal's sync."""

    def __init__(self):
        self.origin = time.monotonic()

    def in_flash(self, captured, length):
        return 0.5 <= (captured - self.origin) % 1.0 < 0.5 + length


class FlashPicture(VideoStreamTrack):
    """Black 320x240 frames (small: a loaded machine's Python encoder keeps its pace), white for the
    three frames of each flash."""

    WIDTH, HEIGHT = 320, 240

    def __init__(self, clock):
        super().__init__()
        self._clock = clock
        size = self.WIDTH * self.HEIGHT
        self._black = (bytes([16]) * size, bytes([128]) * (size // 4))
        self._white = (bytes([235]) * size, self._black[1])
        self.sent = 0

    async def recv(self):
        pts, time_base = await self.next_timestamp()
        # next_timestamp() paces frames from its own start: the frame is captured now.
        luma, chroma = self._white if self._clock.in_flash(time.monotonic(), 3 / VIDEO_FPS) else self._black
        frame = av.VideoFrame(self.WIDTH, self.HEIGHT, "yuv420p")
        frame.planes[0].update(luma)
        frame.planes[1].update(chroma)
        frame.planes[2].update(chroma)
        frame.pts, frame.time_base = pts, time_base
        self.sent += 1
        return frame


class Beep(Tone):
    """Silence with a 1 kHz beep at half scale during each flash's first 100 ms, in 20 ms frames
    paced in real time (as Tone); each sample placed by its capture time on the shared clock (one
    second of the signal is made once and read at the sample the capture time falls on)."""

    def __init__(self, clock):
        super().__init__()
        self._clock = clock
        cycle = [int(16383 * math.sin(2 * math.pi * 1000 * i / AUDIO_RATE)) if clock.in_flash(clock.origin + i / AUDIO_RATE, 0.1) else 0
                 for i in range(AUDIO_RATE)]
        pcm = b"".join(v.to_bytes(2, "little", signed=True) for v in cycle)
        self._cycle = pcm + pcm[:AUDIO_SAMPLES * 2]

    def _frame_bytes(self):
        first = int(round((self._start - self._clock.origin) * AUDIO_RATE)) + self._pts
        offset = (first % AUDIO_RATE) * 2
        return self._cycle[offset:offset + AUDIO_SAMPLES * 2]


def sdp_digest(sdp):
    """The SDP lines that say what was negotiated (for failure reports), without candidates and keys."""
    keep = ("m=", "a=rtpmap", "a=fmtp", "a=sendrecv", "a=sendonly", "a=recvonly", "a=inactive", "a=setup", "a=fingerprint")
    return [line for line in sdp.splitlines() if line.startswith(keep)]


def prefer_video_codec(pc, codec):
    """Puts `codec` (VP8 or H264) and its retransmission format first on every video transceiver."""
    capabilities = RTCRtpSender.getCapabilities("video").codecs
    wanted = [c for c in capabilities if c.mimeType.upper() == "VIDEO/" + codec]
    rtx = [c for c in capabilities if c.mimeType.lower() == "video/rtx"]
    if not wanted:
        raise SystemExit("aiortc cannot send " + codec)
    for transceiver in pc.getTransceivers():
        if transceiver.kind == "video":
            transceiver.setCodecPreferences(wanted + rtx)


class Peer:
    def __init__(self, args):
        self.args = args
        self.pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        if args.play:
            # aiortc's own file player: both tracks decoded from one file and paced on one clock.
            from aiortc.contrib.media import MediaPlayer
            self.player = MediaPlayer(args.play)
            self.video, self.audio = self.player.video, self.player.audio
        elif args.flash_beep:
            clock = FlashBeepClock()
            self.video, self.audio = FlashPicture(clock), Beep(clock)
        else:
            self.video, self.audio = MovingPattern(), Tone()
        self.channel = None
        self.received, self.sent = [], []
        self.frames = {"video": 0, "audio": 0}
        self.remote_kinds = []
        self.on_hold = False
        self.remote_description_set = False
        self.early_candidates = []
        self.channel_open = asyncio.Event()
        self.connected = asyncio.Event()
        self.ended = asyncio.Event()
        self.session = None
        self.socket = None
        self.client_id = None
        self.errors = []
        self.tasks = []
        self.offers = 0
        self.remote_sdp = ""

        @self.pc.on("connectionstatechange")
        def on_state():
            progress("connection " + self.pc.connectionState)
            if self.pc.connectionState == "connected":
                self.connected.set()

        @self.pc.on("track")
        def on_track(track):
            self.remote_kinds.append(track.kind)
            self.tasks.append(asyncio.ensure_future(self.count(track)))

        @self.pc.on("datachannel")
        def on_datachannel(channel):
            self.use_channel(channel)

    async def count(self, track):
        try:
            while True:
                await track.recv()
                self.frames[track.kind] += 1
        except (MediaStreamError, asyncio.CancelledError):
            pass
        except Exception as error:  # a decoder error must show in the summary, not kill the peer
            self.errors.append("%s receive: %r" % (track.kind, error))

    # MARK: the text channel (docs/protocol.md §4)

    def use_channel(self, channel):
        self.channel = channel

        def opened():
            progress("channel-open " + channel.label)
            self.channel_open.set()

        if channel.readyState == "open":
            opened()
        else:
            channel.on("open", opened)

        @channel.on("message")
        def on_message(message):
            text = message if isinstance(message, str) else message.decode("utf-8", "replace")
            self.received.append(text)
            if self.args.role == "caller":
                self.obey(text)

    def send_text(self, text):
        if self.channel is None or self.channel.readyState != "open":
            self.errors.append("could not send %r: channel not open" % text)
            return
        self.channel.send(text)
        self.sent.append(text)

    def obey(self, text):
        fields = [field.strip() for field in text.strip().split("|")]
        keyword = fields[0].upper()
        argument = fields[1] if len(fields) > 1 else ""
        for_this_call = argument in ("", self.args.room)
        if keyword == "HOLD" and for_this_call:
            self.on_hold = True
        elif keyword == "PICKUP" and for_this_call:
            self.on_hold = False
        elif keyword in ("FLASH_ON", "FLASH_OFF") and argument.upper() not in ("ACCEPTED", "REFUSED", "UNAVAILABLE"):
            self.send_text(keyword + "|UNAVAILABLE")  # no torch here

    # MARK: signaling (docs/protocol.md §2)

    async def post(self, url, payload=None):
        # The call credential (docs/protocol.md §1.9) goes with every room request.
        headers = {"X-ECV-Token": self.args.token} if self.args.token else {}
        async with self.session.post(url, data=payload if payload is not None else b"", headers=headers) as reply:
            return await reply.json(content_type=None)

    async def signal(self, payload):
        text = json.dumps(payload)
        if self.socket is not None and not self.socket.closed:
            await self.socket.send_str(json.dumps({"cmd": "send", "msg": text}))
        else:
            answer = await self.post("%s/message/%s/%s" % (self.args.url, self.args.room, self.client_id), text)
            if answer.get("result") != "SUCCESS":
                self.errors.append("posting %s: %s" % (payload["type"], answer))

    async def handle(self, message):
        kind = message.get("type")
        if kind == "offer":
            self.offers += 1
            if self.offers > 1:
                progress("offer number %d (the other side rebuilt its peer)" % self.offers)
            await self.pc.setRemoteDescription(RTCSessionDescription(sdp=message["sdp"], type="offer"))
            self.remote_sdp = message["sdp"]
            await self.flush_candidates()
            if self.offers == 1:
                self.pc.addTrack(self.video)
                self.pc.addTrack(self.audio)
                prefer_video_codec(self.pc, self.args.codec)
            answer = await self.pc.createAnswer()
            await self.pc.setLocalDescription(answer)
            await self.signal({"type": "answer", "sdp": self.pc.localDescription.sdp})
            progress("answered")
        elif kind == "answer":
            await self.pc.setRemoteDescription(RTCSessionDescription(sdp=message["sdp"], type="answer"))
            self.remote_sdp = message["sdp"]
            await self.flush_candidates()
            progress("got-answer")
        elif kind == "candidate":
            text = message.get("candidate", "")
            if not text:
                return
            candidate = candidate_from_sdp(text.split(":", 1)[1] if text.startswith("candidate:") else text)
            candidate.sdpMid = message.get("id")
            candidate.sdpMLineIndex = message.get("label")
            if self.remote_description_set:
                await self.pc.addIceCandidate(candidate)
            else:
                self.early_candidates.append(candidate)
        elif kind == "bye":
            progress("bye")
            self.ended.set()

    async def flush_candidates(self):
        self.remote_description_set = True
        for candidate in self.early_candidates:
            await self.pc.addIceCandidate(candidate)
        self.early_candidates.clear()

    async def read_socket(self):
        async for frame in self.socket:
            if frame.type != aiohttp.WSMsgType.TEXT:
                break
            delivery = json.loads(frame.data)
            if delivery.get("error"):
                self.errors.append("signaling: " + delivery["error"])
            elif delivery.get("msg"):
                try:
                    await self.handle(json.loads(delivery["msg"]))
                except Exception as error:
                    self.errors.append("handling a payload: %r" % error)
        progress("socket closed")

    async def join(self):
        reply = await self.post("%s/join/%s" % (self.args.url, self.args.room))
        if reply.get("result") != "SUCCESS":
            raise RuntimeError("join: %s" % reply)
        params = reply["params"]
        self.client_id = params["client_id"]
        initiator = params.get("is_initiator") in (True, "true")
        progress("joined initiator=%s client=%s" % ("true" if initiator else "false", self.client_id))
        return params, initiator

    async def run(self):
        args = self.args
        self.session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10))
        params, initiator = await self.join()
        wss = params.get("wss_url") or args.url.replace("http", "ws", 1) + "/ws"
        if args.token:
            wss += ("&" if "?" in wss else "?") + "token=" + urllib.parse.quote(args.token)
        self.socket = await self.session.ws_connect(wss, heartbeat=None)
        await self.socket.send_str(json.dumps({"cmd": "register", "roomid": args.room, "clientid": self.client_id}))
        self.tasks.append(asyncio.ensure_future(self.read_socket()))
        if initiator:
            self.use_channel(self.pc.createDataChannel(args.label))
            self.pc.addTrack(self.video)
            self.pc.addTrack(self.audio)
            prefer_video_codec(self.pc, args.codec)
            offer = await self.pc.createOffer()
            await self.pc.setLocalDescription(offer)
            await self.signal({"type": "offer", "sdp": self.pc.localDescription.sdp})
            progress("offered")
        else:
            for text in params.get("messages") or []:
                await self.handle(json.loads(text))

    async def script(self):
        """Scripted sends and mutes, timed from the channel's opening."""
        opened = time.monotonic()
        steps = sorted([(float(t), "send", text) for t, text in (s.split(":", 1) for s in self.args.send)]
                       + [(float(t), "mute", what) for t, what in (s.split(":", 1) for s in self.args.mute)])
        for at, kind, value in steps:
            await asyncio.sleep(max(0, opened + at - time.monotonic()))
            if kind == "send":
                self.send_text(value)
            else:
                media, state = value.split(":")
                self.send_text("STATUS|%s|%s|%s" % (media.upper(), "MUTED" if state == "muted" else "UNMUTED", self.args.room))

    def negotiated_codecs(self):
        result = {}
        for transceiver in self.pc.getTransceivers():
            codecs = getattr(transceiver, "_codecs", None) or []
            if codecs:
                result[transceiver.kind] = codecs[0].mimeType
        return result

    async def rtp_counts(self):
        """Packets per kind and direction from aiortc's own stats (did media arrive at all?)."""
        counts = {}
        try:
            report = await asyncio.wait_for(self.pc.getStats(), 5)
        except Exception as error:
            return {"error": repr(error)}
        for stats in report.values():
            if stats.type in ("inbound-rtp", "outbound-rtp"):
                name = "packetsReceived" if stats.type == "inbound-rtp" else "packetsSent"
                key = "%s %s" % (stats.kind, stats.type)
                counts[key] = counts.get(key, 0) + getattr(stats, name, 0)
        return counts

    def summary(self, ok, media_seconds, rtp):
        return {
            "peer": "aiortc", "role": self.args.role, "codec": self.args.codec, "ok": ok,
            "connectionState": self.pc.connectionState, "mediaSeconds": round(media_seconds, 2),
            "channel": {"label": self.channel.label, "state": self.channel.readyState} if self.channel else None,
            "received": self.received, "sent": self.sent, "onHold": self.on_hold,
            "framesDecoded": self.frames["video"], "audioFramesReceived": self.frames["audio"],
            "framesSent": self.video.sent, "remoteKinds": self.remote_kinds, "rtp": rtp,
            "negotiated": self.negotiated_codecs(), "dtls": self.dtls_states(), "offersReceived": self.offers,
            "keyframeRequests": [round(t * 1000) for t in KEYFRAME_REQUESTS], "receiveTrouble": RECEIVE_TROUBLE,
            "sdp": {"local": sdp_digest(self.pc.localDescription.sdp if self.pc.localDescription else ""),
                    "remote": sdp_digest(self.remote_sdp)},
            "errors": self.errors,
        }

    def dtls_states(self):
        return sorted({t.sender.transport.state for t in self.pc.getTransceivers() if t.sender.transport is not None})

    async def close(self):
        try:
            if self.socket is not None and not self.socket.closed:
                await self.socket.send_str(json.dumps({"cmd": "send", "msg": json.dumps({"type": "bye"})}))
                await self.socket.close()
            if self.client_id:
                await self.post("%s/leave/%s/%s" % (self.args.url, self.args.room, self.client_id))
        except Exception as error:
            progress("leaving: %r" % error)
        for task in self.tasks:
            task.cancel()
        await self.pc.close()
        if self.session is not None:
            await self.session.close()


async def wait_for_stdin_close(limit):
    loop = asyncio.get_running_loop()
    try:
        await asyncio.wait_for(loop.run_in_executor(None, sys.stdin.read), limit)
    except asyncio.TimeoutError:
        progress("stdin stayed open; leaving anyway")


async def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--url", required=True, help="the service's base URL, e.g. http://192.0.2.2:8080")
    parser.add_argument("--room", required=True)
    parser.add_argument("--role", choices=["caller", "agent"], default="caller")
    parser.add_argument("--codec", choices=["VP8", "H264"], default="VP8")
    parser.add_argument("--token", default=None, help="the call credential: caller token or agent session token")
    parser.add_argument("--label", default="textchannel", help="the text channel's label when this peer opens it")
    parser.add_argument("--duration", type=float, default=6.0, help="seconds of media after the channel opened")
    parser.add_argument("--connect-timeout", type=float, default=20.0)
    parser.add_argument("--send", action="append", default=[], help="SECONDS:TEXT after the channel opened")
    parser.add_argument("--mute", action="append", default=[],
                        help="SECONDS:audio|video:muted|unmuted: sends the STATUS text (the synthetic media goes on)")
    parser.add_argument("--play", default=None,
                        help="send this file's video and audio through aiortc's MediaPlayer instead of a pattern and a tone")
    parser.add_argument("--flash-beep", action="store_true",
                        help="send the lip-sync signal (a white flash and a 1 kHz beep together once a second) instead of a pattern and a tone")
    parser.add_argument("--linger", type=float, default=20.0, help="longest wait for stdin to close after the summary")
    args = parser.parse_args()

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="aiortc-peer %(name)s %(levelname)s %(message)s")
    record_keyframe_requests()
    record_receive_trouble()
    peer = Peer(args)
    outcome = {"ok": False, "media_seconds": 0.0}

    async def play():
        await asyncio.wait_for(peer.run(), args.connect_timeout)
        await asyncio.wait_for(asyncio.gather(peer.connected.wait(), peer.channel_open.wait()), args.connect_timeout)
        progress("connected")
        started = time.monotonic()
        peer.tasks.append(asyncio.ensure_future(peer.script()))
        try:
            await asyncio.wait_for(peer.ended.wait(), args.duration)
            peer.errors.append("the other side left early")
        except asyncio.TimeoutError:
            pass
        outcome["media_seconds"] = time.monotonic() - started
        outcome["ok"] = peer.frames["video"] > 0 and not peer.ended.is_set()

    playing = asyncio.ensure_future(play())
    # SIGTERM: the test gave up waiting; report what there is, then close.
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, playing.cancel)
    try:
        await playing
    except asyncio.CancelledError:
        peer.errors.append("interrupted by the test: connection %s, channel %s" % (
            peer.pc.connectionState, peer.channel.readyState if peer.channel else "none"))
    except asyncio.TimeoutError:
        peer.errors.append("timed out: connection %s, channel %s" % (peer.pc.connectionState,
                                                                    peer.channel.readyState if peer.channel else "none"))
    except Exception as error:
        peer.errors.append(repr(error))
    ok, media_seconds = outcome["ok"], outcome["media_seconds"]
    print(json.dumps(peer.summary(ok, media_seconds, await peer.rtp_counts())), flush=True)
    progress("summary-printed")
    if not peer.ended.is_set():
        await wait_for_stdin_close(args.linger)
    await asyncio.wait_for(peer.close(), 10)
    return 0 if ok else 1


if __name__ == "__main__":
    try:
        sys.exit(asyncio.run(main()))
    except KeyboardInterrupt:
        sys.exit(130)
