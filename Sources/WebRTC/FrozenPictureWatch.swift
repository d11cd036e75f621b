/// Notices a far-end picture that stopped while its packets still arrive, and says when to ask
/// for a key frame again.
///
/// The depayloader asks for a key frame when it sees a gap, and the decoder when a reference is
/// missing, but each asks once: a request lost on the way, or answered by a key frame that was
/// itself lost, leaves the picture frozen until the sender's next scheduled key frame (seconds
/// for a browser's H.264). libwebrtc's receiver keeps asking while it waits for a decodable key
/// frame; so does this, once per check (the liveness tick) for as long as the picture is frozen.
struct FrozenPictureWatch {
    /// Key frames asked for because the picture was frozen (each at a check where packets had
    /// arrived and the decoder had produced nothing since the check before).
    private(set) var requests = 0
    private var last: (videoBytes: UInt64, pictures: Int)?

    /// Folds in the video bytes received and the pictures decoded so far; true when a key frame
    /// should be asked for now.
    mutating func update(videoBytesReceived bytes: UInt64, picturesDecoded pictures: Int) -> Bool {
        defer { last = (bytes, pictures) }
        guard let last, bytes > last.videoBytes, pictures == last.pictures else { return false }
        requests += 1
        return true
    }
}
