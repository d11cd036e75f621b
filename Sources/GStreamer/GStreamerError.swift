/// Everything the binding can fail with, each case naming what was asked and what went wrong.
package enum GStreamerError: Error, Equatable, Sendable, CustomStringConvertible {
    case initializationFailed(String)
    case elementNotFound(factory: String)
    case parseFailed(launch: String, message: String)
    case unknownProperty(object: String, property: String)
    case propertyNotWritable(object: String, property: String)
    case propertyNotReadable(object: String, property: String)
    case wrongPropertyType(object: String, property: String, expected: String, got: String)
    case valueOutOfRange(object: String, property: String, value: String, range: String)
    case unknownEnumValue(object: String, property: String, value: String, allowed: [String])
    case unknownSignal(object: String, signal: String)
    case signalArguments(signal: String, message: String)
    case linkFailed(source: String, sink: String, reason: String)
    case padNotFound(element: String, pad: String)
    case stateChangeFailed(element: String, target: String, reason: String)
    case timedOut(operation: String, seconds: Double)
    case promiseFailed(operation: String, reason: String)
    case invalidCaps(String)
    case flow(element: String, result: String)
    case notSupported(String)

    package var description: String {
        switch self {
        case .initializationFailed(let message): "GStreamer failed to initialise: \(message)"
        case .elementNotFound(let factory): "no GStreamer element '\(factory)' (plugin not installed?)"
        case .parseFailed(let launch, let message): "cannot build pipeline '\(launch)': \(message)"
        case .unknownProperty(let object, let property): "\(object) has no property '\(property)'"
        case .propertyNotWritable(let object, let property): "property '\(property)' of \(object) is not writable"
        case .propertyNotReadable(let object, let property): "property '\(property)' of \(object) is not readable"
        case .wrongPropertyType(let object, let property, let expected, let got):
            "property '\(property)' of \(object) takes \(expected), not \(got)"
        case .valueOutOfRange(let object, let property, let value, let range):
            "value \(value) for '\(property)' of \(object) is outside \(range)"
        case .unknownEnumValue(let object, let property, let value, let allowed):
            "'\(value)' is not a value of '\(property)' of \(object); allowed: \(allowed.joined(separator: ", "))"
        case .unknownSignal(let object, let signal): "\(object) has no signal '\(signal)'"
        case .signalArguments(let signal, let message): "signal '\(signal)': \(message)"
        case .linkFailed(let source, let sink, let reason): "cannot link \(source) to \(sink): \(reason)"
        case .padNotFound(let element, let pad): "\(element) has no pad '\(pad)'"
        case .stateChangeFailed(let element, let target, let reason): "\(element) failed to reach \(target): \(reason)"
        case .timedOut(let operation, let seconds): "\(operation) did not finish within \(seconds) s"
        case .promiseFailed(let operation, let reason): "\(operation) failed: \(reason)"
        case .invalidCaps(let caps): "invalid caps '\(caps)'"
        case .flow(let element, let result): "\(element) refused data: \(result)"
        case .notSupported(let message): message
        }
    }
}
