/// Parses the linear subset of gst-launch syntax that presets use.
enum PresetParser {
    static func validateName(_ name: String) throws(PipelineCompileError) {
        let allowed = name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
        guard !name.isEmpty, allowed, name.first != "-" else {
            throw .invalidPreset(name: name, reason: "preset names use lowercase letters, digits and '-' (e.g. \"tone-440\")")
        }
    }

    static func parseChain(_ launch: String, presetName: String) throws(PipelineCompileError) -> [PresetElement] {
        let segments = try splitOutsideQuotes(launch, separator: "!", presetName: presetName)
        guard !segments.isEmpty, segments.allSatisfy({ !$0.trimmingASCIIWhitespace().isEmpty }) else {
            throw .invalidPreset(name: presetName, reason: "the chain is empty or has an empty step between '!'")
        }
        var elements: [PresetElement] = []
        for segment in segments {
            let words = try splitOutsideQuotes(segment, separator: " ", presetName: presetName)
                .map { $0.trimmingASCIIWhitespace() }.filter { !$0.isEmpty }
            let head = words[0]
            if let slash = head.firstIndex(of: "/"), head.firstIndex(of: "=").map({ slash < $0 }) ?? true {
                guard words.count == 1 else {
                    throw .invalidPreset(name: presetName, reason: "caps \"\(segment.trimmingASCIIWhitespace())\" must not contain spaces")
                }
                elements.append(.caps(unquoted(head)))
                continue
            }
            guard head.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_" }) else {
                throw .invalidPreset(name: presetName, reason: "\"\(head)\" is not an element factory name (references and bins are not allowed in presets)")
            }
            var properties: [NodeProperty] = []
            for word in words.dropFirst() {
                guard let equals = word.firstIndex(of: "="), equals != word.startIndex else {
                    throw .invalidPreset(name: presetName, reason: "\"\(word)\" after \(head) is not a property=value pair")
                }
                let key = String(word[..<equals])
                if key == "name" {
                    throw .invalidPreset(name: presetName, reason: "presets may not set name= (the compiler names every element)")
                }
                // GObject property names: a letter, then letters, digits, '-' or '_'. Anything else
                // (a quote, a caps string) would reach gst-launch text and the runtime as a name.
                guard let first = key.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic,
                      key.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "_") })
                else {
                    throw .invalidPreset(name: presetName, reason: "\"\(key)\" after \(head) is not a property name")
                }
                properties.append(NodeProperty(key, .serialized(unquoted(String(word[word.index(after: equals)...])))))
            }
            elements.append(.element(factory: head, properties: properties))
        }
        return elements
    }

    /// Splits on `separator` outside double quotes, keeping quotes (removed later by `unquoted`).
    /// Works on Unicode scalars, as gst-launch works on bytes: a combining mark after a quote,
    /// a backslash or a separator would otherwise join it into one Character and hide it.
    static func splitOutsideQuotes(_ text: String, separator: Unicode.Scalar, presetName: String) throws(PipelineCompileError) -> [String] {
        var parts: [String] = []
        var current = String.UnicodeScalarView()
        var inQuotes = false
        var escaping = false
        for scalar in text.unicodeScalars {
            if escaping {
                current.append(scalar)
                escaping = false
            } else if scalar == "\\" {
                current.append(scalar)
                escaping = true
            } else if scalar == "\"" {
                current.append(scalar)
                inQuotes.toggle()
            } else if scalar == separator, !inQuotes {
                parts.append(String(current))
                current = String.UnicodeScalarView()
            } else {
                current.append(scalar)
            }
        }
        guard !inQuotes else { throw .invalidPreset(name: presetName, reason: "unterminated double quote") }
        parts.append(String(current))
        return parts
    }

    /// Removes double quotes and backslash escapes, as gst-launch does (scalar by scalar).
    static func unquoted(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        var escaping = false
        for scalar in text.unicodeScalars {
            if escaping {
                result.append(scalar)
                escaping = false
            } else if scalar == "\\" {
                escaping = true
            } else if scalar != "\"" {
                result.append(scalar)
            }
        }
        return String(result)
    }
}
