import ECVProtocol
import Foundation

/// `GET /r/<room>`: a page that joins the room with the browser's own WebRTC the way the SDK does
/// (AppRTC join, collider socket, trickled candidates, the `textchannel` data channel), so
/// `VideoCall.getUrl()` opens a working media end (docs/protocol.md §5.1).
///
/// It behaves like a caller (default) or like an agent-side media end (`?role=agent`): as a caller it
/// answers `FLASH_ON`/`FLASH_OFF` as unavailable (a browser has no torch), goes on hold on `HOLD`,
/// sends `STATUS|…` when the user mutes and hangs up through the REST API. Query parameters:
/// `role=caller|agent`, `codec=VP8|VP9|H264` (the preferred video codec), `label=<text channel label>`
/// when it opens the channel, `token=<caller token>`, `watch=keyframes` (note when the other side asks
/// for key frames) or `watch=frames` (sample the remote video's decoded-frame count every 50 ms), `video=WxH` (the
/// camera size, 640×480 by default). Tests read it through `window.ecvTest` (see `BrowserPage+Script.swift`).
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
        /// The REST Hangup endpoint (docs/protocol.md §1.4).
        let hangupUrl: String
        /// The label the page opens its text channel with when `?label=` does not name one.
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
                 hangupUrl: baseURL + ECVAPI.hangup,
                 dataChannelLabel: "textchannel")
    }

    /// The settings as JSON that cannot end the `<script>` element it sits in.
    var settingsJSON: String {
        // Settings are strings only, which always encode.
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
          #stage { position: relative; }
          #hold { position: absolute; inset: 0; display: none; align-items: center; justify-content: center;
                  background: rgba(0, 0, 0, 0.75); font-size: 2rem; border-radius: 6px; }
          #hold.shown { display: flex; }
        </style>
        </head>
        <body>
        <h1>ECV call <code>\(roomId)</code></h1>
        <p id="status">starting…</p>
        <div id="videos">
          <div id="stage"><video id="remote" autoplay playsinline></video><div id="hold">On hold</div></div>
          <video id="local" autoplay playsinline muted></video>
        </div>
        <div id="controls"><button id="mute-audio" type="button">Mute microphone</button>
        <button id="mute-video" type="button">Stop camera</button>
        <button id="hangup" type="button">Hang up</button></div>
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

}
