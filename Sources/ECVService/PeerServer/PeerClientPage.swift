/// `GET <path>/client`: a page with a minimal PeerJS-protocol client in plain JavaScript (no
/// PeerJS library): registers on this server, calls a peer or answers calls with the browser's
/// camera and microphone, and opens or takes a JSON data connection, echoing what it receives.
/// Query: `key`, `id`, `call=<peer>` (else it answers), `duration` (seconds of media: from the
/// call, or from the first stream it answered). The page
/// exposes `window.peerTest.summary()` for drivers (Tests/Interop/peers/peerjs_page.py).
enum PeerClientPage {
    static let html = """
    <!doctype html>
    <html><head><meta charset="utf-8"><title>ECVKit peer page</title></head>
    <body><video id="remote" autoplay playsinline muted></video><pre id="log"></pre>
    <script>
    \(script)
    </script></body></html>
    """

    static let script = #"""
    "use strict";
    const query = new URLSearchParams(location.search);
    const key = query.get("key") || "peerjs", myId = query.get("id"), target = query.get("call");
    const duration = Number(query.get("duration") || "5") * 1000;
    const base = location.pathname.replace(/\/client$/, "");
    const result = { ok: false, id: myId, opened: false, calls: 0, streams: 0, framesDecoded: 0, framesSent: 0,
                     received: [], sent: [], errors: [], closed: [], log: [] };
    const connections = new Map();   // connectionId -> { pc, type, peer, pending: [] }
    let socket, iceServers = [], localStream, finished = false, mediaReady;
    const media = new Promise((resolve) => { mediaReady = resolve; });
    const log = (text) => { result.log.push(text); document.getElementById("log").textContent += text + "\n"; };
    const token = Math.random().toString(36).slice(2, 12);
    const send = (message) => socket.send(JSON.stringify(message));
    const random = () => Math.random().toString(36).slice(2, 12);

    function connection(id, type, peer) {
      const pc = new RTCPeerConnection({ iceServers });
      const entry = { pc, type, peer, pending: [], channel: null };
      connections.set(id, entry);
      pc.onicecandidate = (event) => {
        if (event.candidate && event.candidate.candidate) {
          send({ type: "CANDIDATE", dst: peer, payload: { candidate: event.candidate.toJSON(), type, connectionId: id } });
        }
      };
      pc.ontrack = (event) => {
        if (event.track.kind === "video") { document.getElementById("remote").srcObject = event.streams[0]; }
        if (!entry.streamed) {
          entry.streamed = true; result.streams += 1; log("stream from " + peer);
          if (!target && result.streams === 1) { setTimeout(finish, duration); }
        }
      };
      pc.ondatachannel = (event) => watchChannel(entry, event.channel);
      return entry;
    }

    function watchChannel(entry, channel) {
      entry.channel = channel;
      channel.binaryType = "arraybuffer";
      channel.onclose = () => { result.closed.push("channel:" + entry.type + ":" + entry.peer); log("closed " + entry.type); };
      if (entry.type !== "data") {
        channel.onmessage = (event) => { if (event.data === "close") { result.closed.push("notice:media:" + entry.peer); entry.pc.close(); } };
        return;
      }
      channel.onopen = () => { if (target) { const text = "hello from chromium"; channel.send(new TextEncoder().encode(JSON.stringify(text))); result.sent.push(text); } };
      channel.onmessage = (event) => {
        const bytes = typeof event.data === "string" ? new TextEncoder().encode(event.data) : new Uint8Array(event.data);
        const value = JSON.parse(new TextDecoder().decode(bytes));
        if (value && value.__peerData) { channel.close(); return; }
        result.received.push(String(value));
        if (!String(value).startsWith("echo: ")) { const reply = "echo: " + value; channel.send(new TextEncoder().encode(JSON.stringify(reply))); result.sent.push(reply); }
      };
    }

    async function call(peer) {
      const id = "mc_" + random();
      const entry = connection(id, "media", peer);
      for (const track of localStream.getTracks()) { entry.pc.addTrack(track, localStream); }
      watchChannel(entry, entry.pc.createDataChannel(id));
      const offer = await entry.pc.createOffer();
      await entry.pc.setLocalDescription(offer);
      send({ type: "OFFER", dst: peer, payload: { sdp: offer, type: "media", connectionId: id, metadata: null, browser: "chromium" } });
      result.calls += 1;
      const dataId = "dc_" + random();
      const data = connection(dataId, "data", peer);
      watchChannel(data, data.pc.createDataChannel(dataId, { ordered: true }));
      const dataOffer = await data.pc.createOffer();
      await data.pc.setLocalDescription(dataOffer);
      send({ type: "OFFER", dst: peer, payload: { sdp: dataOffer, type: "data", connectionId: dataId, label: dataId,
                                                  reliable: true, serialization: "json", browser: "chromium" } });
    }

    async function answer(message) {
      const payload = message.payload;
      await media;
      const entry = connection(payload.connectionId, payload.type, message.src);
      if (payload.type === "media") {
        result.calls += 1;
        for (const track of localStream.getTracks()) { entry.pc.addTrack(track, localStream); }
      }
      await entry.pc.setRemoteDescription(payload.sdp);
      const answer = await entry.pc.createAnswer();
      await entry.pc.setLocalDescription(answer);
      send({ type: "ANSWER", dst: message.src, payload: { sdp: answer, type: payload.type, connectionId: payload.connectionId, browser: "chromium" } });
      for (const candidate of entry.pending) { await entry.pc.addIceCandidate(candidate); }
      entry.pending = [];
    }

    async function onMessage(message) {
      switch (message.type) {
        case "OPEN":
          result.opened = true;
          iceServers = (message.payload && message.payload.iceServers) || [];
          log("open " + myId);
          localStream = await navigator.mediaDevices.getUserMedia({ video: { width: 320, height: 240 }, audio: true });
          mediaReady();
          setInterval(() => send({ type: "HEARTBEAT" }), 5000);
          if (target) { await call(target); }
          // Calling: `duration` from now; answering: `duration` after the first stream (at most a minute).
          setTimeout(finish, target ? duration : 60000);
          break;
        case "OFFER": await answer(message); break;
        case "ANSWER": await connections.get(message.payload.connectionId).pc.setRemoteDescription(message.payload.sdp); break;
        case "CANDIDATE": {
          await media;
          const entry = connections.get(message.payload.connectionId);
          if (!entry) { break; }
          if (entry.pc.remoteDescription) { await entry.pc.addIceCandidate(message.payload.candidate); } else { entry.pending.push(message.payload.candidate); }
          break;
        }
        case "LEAVE": for (const entry of connections.values()) { if (entry.peer === message.src) { entry.pc.close(); result.closed.push("leave:" + entry.peer); } } break;
        case "EXPIRE": result.errors.push("peer-unavailable " + message.src); break;
        default: result.errors.push(message.type + " " + JSON.stringify(message.payload || {})); break;
      }
    }

    async function measure() {
      for (const entry of connections.values()) {
        if (entry.type !== "media" || entry.pc.connectionState === "closed") { continue; }
        const stats = await entry.pc.getStats();
        stats.forEach((report) => {
          if (report.type === "inbound-rtp" && report.kind === "video") { result.framesDecoded = Math.max(result.framesDecoded, report.framesDecoded || 0); }
          if (report.type === "outbound-rtp" && report.kind === "video") { result.framesSent = Math.max(result.framesSent, report.framesEncoded || 0); }
        });
      }
    }

    async function finish() {
      if (finished) { return; }
      await measure();
      finished = true;
      // Hang up as a PeerJS page does: the connections close (their channels with them), the socket stays.
      for (const entry of connections.values()) { if (entry.channel) { entry.channel.close(); } entry.pc.close(); }
      result.ok = result.opened && result.streams > 0 && result.framesDecoded > 0;
      log("finished");
    }

    window.peerTest = { summary: () => result, done: () => finished, measure, finish };
    socket = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + base + "/peerjs?key=" +
                           encodeURIComponent(key) + "&id=" + encodeURIComponent(myId) + "&token=" + token);
    socket.onmessage = (event) => onMessage(JSON.parse(event.data)).catch((error) => result.errors.push(String(error)));
    socket.onclose = () => log("socket closed");
    setInterval(() => { if (!finished) { measure(); } }, 1000);
    """#
}
