// Shared by the ECVProtocol fuzz targets (rest, signaling, sockets, pc-config): the property every
// wire message must have, whatever bytes arrive.
import ECVProtocol
import Foundation

/// Decodes `bytes` as `T`. A refusal is fine (a ProtocolError by type, whose description is what
/// reaches the logs). When decoding succeeds: the value encodes, its encoding decodes to an equal
/// value, and encoding that again gives the same bytes (ECVJSON output is byte-stable). Anything
/// else stops the fuzzer with the input saved.
@discardableResult
func roundTrip<T: Codable & Equatable>(_ type: T.Type, _ bytes: Data) -> T? {
    let value: T
    do { value = try ECVJSON.decode(T.self, from: bytes) } catch {
        if error.description.isEmpty { fatalError("\(T.self): a refusal without a description") }
        return nil
    }
    let encoded: Data
    do { encoded = try ECVJSON.encode(value) } catch { fatalError("\(T.self) decoded but does not encode: \(error)") }
    let again: T
    do { again = try ECVJSON.decode(T.self, from: encoded) } catch {
        fatalError("\(T.self): its own encoding does not decode: \(error)\n\(String(decoding: encoded, as: UTF8.self))")
    }
    guard again == value else { fatalError("\(T.self) changed in a round trip:\n\(value)\n\(again)") }
    guard (try? ECVJSON.encode(again)) == encoded else { fatalError("\(T.self) encodes differently the second time") }
    return value
}

/// The fuzzer's bytes as Data.
func fuzzData(_ data: UnsafePointer<UInt8>, _ size: Int) -> Data { Data(UnsafeBufferPointer(start: data, count: size)) }
