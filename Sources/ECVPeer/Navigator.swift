/// Where local media comes from (SkyWay's `SKWNavigator`).
public enum Navigator {
    /// A local stream with `constraints`: what every call it is given sends.
    /// - Throws: `invalidArgument` for constraints no call could honour.
    public static func getUserMedia(constraints: MediaConstraints = MediaConstraints()) throws(PeerError) -> MediaStream {
        if let problem = constraints.problem() { throw PeerError(.invalidArgument, problem) }
        return MediaStream(local: constraints)
    }
}
