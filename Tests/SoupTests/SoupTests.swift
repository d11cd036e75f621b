import Testing

/// All Soup tests run one after another: they open real sockets and the leak test counts this
/// process's threads and file descriptors, which concurrent tests would disturb.
@Suite(.serialized, .timeLimit(.minutes(2))) struct SoupTests {}
