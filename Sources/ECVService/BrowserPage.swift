import ECVProtocol
import Foundation

/// `GET /r/<room>`: a page that joins the room with the browser's own WebRTC the way the SDK does
/// (AppRTC join, collider socket, trickled candidates, the `textchannel` data channel), so
/// `VideoCall.getUrl()` opens a working media end (docs/protocol.md §5.1).
struct BrowserPage {
    /// What the script needs, embedded as JSON so no URL is assembled in JavaScript.
    struct Settings: Encodable {
        let roomId: String
        let joinUrl: String
        /// `+ <clientId>` posts a payload.
        let messageUrl: String
        /// `+ <clientId>` leaves the room.
        let leaveUrl: String
        /// Used when the join answer has no `wss_url`.
        let signalingUrl: String
        let dataChannelLabel: String
    }

    let roomId: String
    let baseURL: String
    let signalingURL: String

    var settings: Settings {
        Settings(roomId: roomId,
                 joinUrl: baseURL + ECVAPI.joinPath(room: roomId),
                 messageUrl: baseURL + "/message/" + roomId + "/",
                 leaveUrl: baseURL + "/leave/" + roomId + "/",
                 signalingUrl: signalingURL,
                 dataChannelLabel: "textchannel")
    }

    /// The settings as JSON that cannot end the `<script>` element it sits in.
    var settingsJSON: String {
        let json = (try? ECVJSON.encodeString(settings)) ?? "{}"
        return json.replacingOccurrences(of: "<", with: "\\u003c")
    }

    var html: String {
        // roomId is a valid rtcId ([A-Za-z0-9._~-]), so it is safe in HTML text as is.
        """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>ECV call \(roomId)</title>
        <style>
          body { font-family: system-ui, sans-serif; margin: 1rem; background: #111; color: #eee; }
          #videos { display: flex; gap: 1rem; flex-wrap: wrap; }
          video { background: #000; border-radius: 6px; }
          #remote { width: 640px; max-width: 100%; aspect-ratio: 4 / 3; }
          #local { width: 240px; aspect-ratio: 4 / 3; }
          #log { font-family: monospace; font-size: 0.85rem; color: #aaa; }
          form, #controls { margin: 0.75rem 0; }
          input { width: 24rem; max-width: 70%; }
        </style>
        </head>
        <body>
        <h1>ECV call <code>\(roomId)</code></h1>
        <p id="status">starting…</p>
        <div id="videos">
          <video id="remote" autoplay playsinline></video>
          <video id="local" autoplay playsinline muted></video>
        </div>
        <div id="controls"><button id="hangup" type="button">Hang up</button></div>
        <form id="chat"><input id="text" autocomplete="off" placeholder="text for the data channel" disabled>
        <button id="send" disabled>Send</button></form>
        <ol id="log" reversed></ol>
        <script id="ecv-settings" type="application/json">\(settingsJSON)</script>
        <script>
        \(Self.script)
        </script>
        </body>
        </html>

        """
    }

    static let script = #"""
    (() => {
      'use strict';
      const settings = JSON.parse(document.getElementById('ecv-settings').textContent);
      const $ = (id) => document.getElementById(id);
      const log = (text) => {
        const item = document.createElement('li');
        item.textContent = new Date().toLocaleTimeString() + '  ' + text;
        $('log').prepend(item);
      };
      const status = (text) => { $('status').textContent = text; };

      let pc = null, socket = null, registered = false, clientId = null, channel = null, localStream = null;
      let remoteDescriptionSet = false, ended = false;
      const earlyCandidates = [];
      let outgoing = Promise.resolve();
      let incoming = Promise.resolve();

      // Payloads go out in order: over HTTP until our socket registered, then on the socket.
      function send(payload) {
        const text = JSON.stringify(payload);
        outgoing = outgoing.then(async () => {
          if (registered && socket && socket.readyState === WebSocket.OPEN) {
            socket.send(JSON.stringify({ cmd: 'send', msg: text }));
            return;
          }
          const reply = await fetch(settings.messageUrl + encodeURIComponent(clientId), { method: 'POST', body: text });
          const answer = await reply.json();
          if (answer.result !== 'SUCCESS') log('posting ' + payload.type + ' failed: ' + answer.result);
        }).catch((error) => log('sending ' + payload.type + ' failed: ' + error));
      }

      // Payloads are handled strictly one after another (an answer must not overtake its offer).
      function receive(payload) {
        incoming = incoming.then(() => handle(payload)).catch((error) => log('handling ' + payload.type + ' failed: ' + error));
      }

      async function flushCandidates() {
        remoteDescriptionSet = true;
        for (const candidate of earlyCandidates.splice(0)) await pc.addIceCandidate(candidate);
      }

      async function handle(message) {
        if (ended) return;
        switch (message.type) {
          case 'offer': {
            await pc.setRemoteDescription({ type: 'offer', sdp: message.sdp });
            await flushCandidates();
            const answer = await pc.createAnswer();
            await pc.setLocalDescription(answer);
            send({ type: 'answer', sdp: answer.sdp });
            log('received the offer, sent an answer');
            break;
          }
          case 'answer':
            await pc.setRemoteDescription({ type: 'answer', sdp: message.sdp });
            await flushCandidates();
            log('received the answer');
            break;
          case 'candidate': {
            const candidate = { candidate: message.candidate, sdpMid: message.id, sdpMLineIndex: message.label };
            if (remoteDescriptionSet) await pc.addIceCandidate(candidate); else earlyCandidates.push(candidate);
            break;
          }
          case 'bye':
            log('the other side left');
            end('The call ended.', false);
            break;
          default:
            log('ignored a ' + message.type + ' payload');
        }
      }

      function useChannel(dataChannel) {
        channel = dataChannel;
        channel.onopen = () => { $('text').disabled = false; $('send').disabled = false; log('text channel open'); };
        channel.onclose = () => { $('text').disabled = true; $('send').disabled = true; log('text channel closed'); };
        channel.onmessage = (event) => log('peer: ' + event.data);
      }

      function openSocket(url) {
        socket = new WebSocket(url);
        socket.onopen = () => {
          socket.send(JSON.stringify({ cmd: 'register', roomid: settings.roomId, clientid: clientId }));
          registered = true;
          log('registered with the signaling server');
        };
        socket.onmessage = (event) => {
          const delivery = JSON.parse(event.data);
          if (delivery.error) { log('signaling error: ' + delivery.error); return; }
          if (delivery.msg) receive(JSON.parse(delivery.msg));
        };
        socket.onclose = (event) => { registered = false; log('signaling socket closed (' + event.code + ')'); };
      }

      function end(reason, tellPeer) {
        if (ended) return;
        ended = true;
        if (clientId) {
          if (tellPeer) {
            const bye = JSON.stringify({ type: 'bye' });
            if (registered && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ cmd: 'send', msg: bye }));
            else navigator.sendBeacon(settings.messageUrl + encodeURIComponent(clientId), bye);
          }
          navigator.sendBeacon(settings.leaveUrl + encodeURIComponent(clientId));
        }
        if (socket) socket.close();
        if (pc) pc.close();
        if (localStream) localStream.getTracks().forEach((track) => track.stop());
        $('hangup').disabled = true;
        status(reason);
      }

      async function main() {
        status('joining room ' + settings.roomId + '…');
        const reply = await (await fetch(settings.joinUrl, { method: 'POST' })).json();
        if (reply.result !== 'SUCCESS') { status('Cannot join room ' + settings.roomId + ': ' + reply.result); return; }
        const params = reply.params;
        clientId = params.client_id;
        const initiator = params.is_initiator === true || params.is_initiator === 'true';
        log('joined as client ' + clientId + (initiator ? ' (initiator)' : ''));

        pc = new RTCPeerConnection(JSON.parse(params.pc_config));
        pc.onicecandidate = (event) => {
          if (event.candidate && event.candidate.candidate) {
            send({ type: 'candidate', label: event.candidate.sdpMLineIndex, id: event.candidate.sdpMid,
                   candidate: event.candidate.candidate });
          }
        };
        pc.ontrack = (event) => { $('remote').srcObject = event.streams[0] || new MediaStream([event.track]); };
        pc.ondatachannel = (event) => useChannel(event.channel);
        pc.onconnectionstatechange = () => { log('connection ' + pc.connectionState); if (pc.connectionState === 'connected') status('In call.'); };

        try {
          localStream = await navigator.mediaDevices.getUserMedia({ audio: true, video: true });
          $('local').srcObject = localStream;
          localStream.getTracks().forEach((track) => pc.addTrack(track, localStream));
        } catch (error) {
          log('no camera or microphone (' + error.name + '): receiving only');
          if (initiator) {
            pc.addTransceiver('audio', { direction: 'recvonly' });
            pc.addTransceiver('video', { direction: 'recvonly' });
          }
        }

        openSocket(params.wss_url || settings.signalingUrl);
        if (initiator) {
          useChannel(pc.createDataChannel(settings.dataChannelLabel));
          const offer = await pc.createOffer();
          await pc.setLocalDescription(offer);
          send({ type: 'offer', sdp: offer.sdp });
          status('Waiting for the other side…');
        } else {
          for (const text of params.messages || []) receive(JSON.parse(text));
          status('Connecting…');
        }
      }

      $('chat').addEventListener('submit', (event) => {
        event.preventDefault();
        const text = $('text').value;
        if (!text || !channel || channel.readyState !== 'open') return;
        channel.send(text);
        log('you: ' + text);
        $('text').value = '';
      });
      $('hangup').addEventListener('click', () => end('You hung up.', true));
      window.addEventListener('pagehide', () => end('Left the page.', true));
      main().catch((error) => { status('Failed: ' + error); log(String(error)); });
    })();
    """#
}
