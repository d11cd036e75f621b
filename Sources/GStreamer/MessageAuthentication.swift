internal import COpenSSL

/// Message authentication codes from libcrypto, for the layers above that may not touch C.
package enum MessageAuthentication {
    /// HMAC-SHA1 of `message` under `key` (20 bytes): STUN's MESSAGE-INTEGRITY (RFC 5389 §15.4).
    package static func hmacSHA1(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let made = key.withUnsafeBytes { keyBytes in
            message.withUnsafeBytes { messageBytes in
                HMAC(EVP_sha1(), keyBytes.baseAddress, Int32(keyBytes.count), messageBytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
                     messageBytes.count, &digest, &length)
            }
        }
        // HMAC fails only when libcrypto cannot allocate; SHA-1 always exists.
        precondition(made != nil, "HMAC-SHA1 failed")
        return Array(digest.prefix(Int(length)))
    }
}
