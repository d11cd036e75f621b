/// Compiles the audio half of the send graph:
/// input → [webrtcdsp] → volume (mute) → leaky queue → opusenc → rtpopuspay, the encoder's output moved earlier
/// by the delay the processing put into the sound (`SendAudioDelay`), plus, when echo cancellation is
/// on, the speaker chain holding the `webrtcechoprobe` that webrtcdsp needs from the start.
struct AudioBranch {
    var parameters: MediaParameters
    var presets: PresetLibrary

    /// The echo probe's element name, which webrtcdsp's `probe` property refers to.
    static let echoProbeName = "echo_probe"
    /// Where far-end audio joins the speaker chain.
    static let speakerMixerName = "speaker_mix"
    /// Opus in-band FEC is only produced when the encoder expects loss; 10 % is a conservative
    /// start that the runtime may tune from RTCP receiver reports.
    static let expectedPacketLossPercent = 10
    /// webrtcbin's default jitterbuffer latency, the delay far-end audio arrives with.
    static let farEndLatencyNanoseconds: UInt = 200_000_000
    /// The queue in front of the encoder holds at most this much sound and drops the oldest, as
    /// the video's does with frames. webrtcbin holds a stream's input until the transport is up;
    /// without the queue the live source stalled behind it and, once let go, sent everything it
    /// had captured meanwhile in one burst (0.4 to 0.9 s in `ecv demo` on a loaded 2-core
    /// machine). The far end's jitter buffer stamped the burst by arrival, and its lip sync then
    /// shifted our video by as much at the first sender report: a hole of that length in the
    /// video of its recording. 100 ms rides out the encoder thread's scheduling on a busy host
    /// (five 20 ms Opus frames).
    static let encoderQueueNanoseconds: UInt = 100_000_000

    struct Result {
        var output: GraphOutput
        var bitrate: BitrateControl
        var mute: MuteControl
        var loop: FileLoop?
        var speakerInput: PadRef?
    }

    func validate() throws(PipelineCompileError) -> AudioCodec {
        let codec = try AudioCodec.parse(parameters.audioCodec)
        if parameters.audioStartBitrate != 0, !AudioCodec.bitrateRangeKbps.contains(parameters.audioStartBitrate) {
            throw .invalidBitrate(parameter: "audioStartBitrate", kbps: parameters.audioStartBitrate, allowed: AudioCodec.bitrateRangeKbps)
        }
        return codec
    }

    func add(_ input: AudioSourceSpec, into builder: inout GraphBuilder) throws(PipelineCompileError) -> Result {
        let codec = try validate()
        let added = try AudioSourceBuilder(presets: presets).add(input, into: &builder)
        var chain = [parameters.applicationAudio ? try addApplicationAudio(after: added.last, into: &builder) : added.last]
        if parameters.noAudioProcessing {
            builder.decide("audio processing: off (noAudioProcessing=true), no webrtcdsp")
        } else {
            var properties = [NodeProperty("echo-cancel", .bool(parameters.echoCancellationEnabled)),
                              NodeProperty("noise-suppression", .bool(parameters.noiseSuppressionEnabled)),
                              NodeProperty("gain-control", .bool(true))]
            if parameters.echoCancellationEnabled { properties.append(NodeProperty("probe", .string(Self.echoProbeName))) }
            chain.append(try builder.add(PipelineNode(id: "audio_dsp", factory: "webrtcdsp", properties: properties, role: .audioProcessing),
                                         purpose: "audio processing (echo cancellation, noise suppression, gain control)"))
            builder.decide("audio processing: webrtcdsp echo-cancel=\(parameters.echoCancellationEnabled) noise-suppression=\(parameters.noiseSuppressionEnabled) gain-control=true"
                           + (parameters.echoCancellationEnabled ? ", echo reference from \(Self.echoProbeName) in the speaker chain" : ""))
        }
        let mute = try builder.add("audio_mute", "volume", ["mute": .bool(false)], role: .audioMute, purpose: "audio mute")
        let queue = try builder.add("audio_queue", "queue", ["leaky": .enumNick("downstream"), "max-size-buffers": .uint(0), "max-size-bytes": .uint(0),
                                                             "max-size-time": .uint(Self.encoderQueueNanoseconds)],
                                    role: .audioEncoderQueue, purpose: "decoupling the encoder thread; stale sound is dropped, never sent late")
        chain += [mute, queue]
        var encoderProperties: [NodeProperty] = []
        let kbps: Int? = parameters.audioStartBitrate > 0 ? parameters.audioStartBitrate : nil
        if let kbps { encoderProperties.append(NodeProperty("bitrate", .int(kbps * 1000))) }
        encoderProperties += [NodeProperty("audio-type", .enumNick("voice")), NodeProperty("frame-size", .enumNick("20")),
                              NodeProperty("inband-fec", .bool(true)), NodeProperty("packet-loss-percentage", .int(Self.expectedPacketLossPercent))]
        let delay = SendAudioDelay(parameters: parameters)
        let encoder = try builder.add(PipelineNode(id: "audio_encoder", factory: "opusenc", properties: encoderProperties, role: .audioEncoder,
                                                   outputTimestampAdvance: delay.nanoseconds),
                                      purpose: "Opus encoding")
        if delay.samples > 0 {
            builder.decide("audio timestamps: encoded audio moved \(delay.samples) samples (\(delay.nanoseconds / 1000) µs) earlier, "
                           + "the delay webrtcdsp put into the sound, so it stays in sync with the video")
        }
        builder.decide("audio encoder: opusenc, " + (kbps.map { "\($0) kbit/s (audioStartBitrate)" } ?? "encoder default bitrate (audioStartBitrate 0)")
                       + ", 20 ms frames, in-band FEC")
        let payloader = try builder.add("audio_pay", "rtpopuspay", ["pt": .uint(UInt(AudioCodec.payloadType))], role: .audioPayloader,
                                        purpose: "Opus RTP payloading")
        chain += [encoder, payloader]
        builder.chain(chain)

        let speakerInput = parameters.echoCancellationEnabled ? try addSpeaker(into: &builder) : nil
        return Result(output: GraphOutput(kind: .audio, node: payloader, pad: "src", encodingName: codec.rawValue,
                                          payloadType: AudioCodec.payloadType, clockRate: AudioCodec.clockRate),
                      bitrate: BitrateControl(node: encoder, property: "bitrate", unitsPerKbps: 1000, encoding: .int, initialKbps: kbps),
                      mute: MuteControl(node: mute, muted: [NodeProperty("mute", .bool(true))], unmuted: [NodeProperty("mute", .bool(false))]),
                      loop: added.loop, speakerInput: speakerInput)
    }

    /// The element names of the application-audio input (see `MediaParameters.applicationAudio`).
    public static let applicationAudioSourceName = "app_audio_src"
    static let applicationAudioMixerName = "app_audio_mix"
    /// How far ahead of the clock the application's audio may be queued (the playout stays well under).
    static let applicationAudioMaxLatency = 1_000_000_000

    /// source → volume (gate) ┐
    /// appsrc → convert → resample → caps ┴→ audiomixer → caps → (webrtcdsp)
    /// The appsrc takes any raw audio (its caps change with what is played); the mixer runs on the
    /// configured source's timeline, so an idle appsrc costs nothing but the mixer's wait.
    private func addApplicationAudio(after source: String, into builder: inout GraphBuilder) throws(PipelineCompileError) -> String {
        let gate = try builder.add("app_audio_gate", "volume", ["mute": .bool(false)], role: .applicationAudioGate,
                                   purpose: "silencing the configured source while application audio replaces it")
        let appSource = try builder.add(Self.applicationAudioSourceName, "appsrc",
                                        // A stated latency range, so the mixer can configure
                                        // its own (an appsrc alone states a maximum of 0).
                                        ["format": .enumNick("time"), "is-live": .bool(true), "do-timestamp": .bool(false),
                                         "min-latency": .int(0), "max-latency": .int(Self.applicationAudioMaxLatency),
                                         "caps": .caps(AudioSourceBuilder.rawCaps)],
                                        role: .applicationAudioSource, purpose: "the application's played audio")
        let convert = try builder.add("app_audio_convert", "audioconvert", purpose: "converting the application's audio")
        let resample = try builder.add("app_audio_resample", "audioresample", purpose: "resampling the application's audio to 48 kHz")
        let appCaps = try builder.addCaps("app_audio_caps", AudioSourceBuilder.rawCaps, role: .audioFormat)
        // discont-wait 0: a clip that starts after a pause (or right after an interrupted one) is
        // placed at its own timestamps at once, not glued to the end of the last one for a second.
        let mixer = try builder.add(Self.applicationAudioMixerName, "audiomixer", ["discont-wait": .uint(0)], role: .applicationAudioMixer,
                                    purpose: "mixing the application's audio with the configured source")
        let mixed = try builder.addCaps("app_audio_mixed", AudioSourceBuilder.rawCaps, role: .audioFormat)
        builder.chain([source, gate, mixer, mixed])
        builder.chain([appSource, convert, resample, appCaps, mixer])
        builder.decide("application audio: appsrc \(Self.applicationAudioSourceName) mixed with the configured source in \(mixer), "
                       + "before the audio processing, so played audio is processed and encoded like the microphone's")
        return mixed
    }

    /// live silence → audiomixer → caps → webrtcechoprobe → audioconvert → audioresample → sink.
    /// webrtcdsp looks its probe up by name when it starts and fails without one, so the probe
    /// must exist before any far-end audio does; the silence keeps the mixer (and the probe's
    /// timeline) running until far-end streams are linked into the mixer.
    private func addSpeaker(into builder: inout GraphBuilder) throws(PipelineCompileError) -> PadRef {
        let silence = try builder.add("speaker_silence", "audiotestsrc", ["is-live": .bool(true), "wave": .enumNick("silence"),
                                                                          "samplesperbuffer": .int(AudioSourceBuilder.samplesPerBuffer)],
                                      role: .speakerSilence, purpose: "keeping the speaker mixer running")
        // Far-end audio arrives through webrtcbin's jitterbuffer (200 ms by default); declaring
        // that latency up front keeps the mixer from treating the first far-end buffers as late
        // and avoids a latency jump when the first stream joins. Not `ignore-inactive-pads`:
        // with it the mixer can push EOS at startup when it times out before the silence's
        // first buffer (seen here about once in 20 runs under load).
        let mixer = try builder.add(Self.speakerMixerName, "audiomixer", ["min-upstream-latency": .uint(Self.farEndLatencyNanoseconds)],
                                    role: .speakerMixer, purpose: "mixing far-end audio for the speaker")
        let caps = try builder.addCaps("speaker_caps", AudioSourceBuilder.rawCaps, role: .audioFormat)
        let probe = try builder.add(Self.echoProbeName, "webrtcechoprobe", role: .echoProbe, purpose: "the echo canceller's speaker reference")
        let convert = try builder.add("speaker_convert", "audioconvert", purpose: "speaker format conversion")
        let resample = try builder.add("speaker_resample", "audioresample", purpose: "speaker resampling")
        let sink: String
        if parameters.useSpeakerPhone {
            sink = try builder.add("speaker_sink", "autoaudiosink", role: .speakerSink, purpose: "playing far-end audio")
        } else {
            sink = try EarpieceOutput.add(parameters, prefix: "speaker_sink", into: &builder).first
        }
        builder.chain([silence, mixer, caps, probe, convert, resample, sink])
        builder.decide("speaker: far-end audio joins \(mixer), passes \(probe), plays on "
                       + (parameters.useSpeakerPhone ? "autoaudiosink" : "the earpiece output \(parameters.earpieceSink) (useSpeakerPhone=false)"))
        return PadRef(mixer)
    }
}
