/// The named presets a compiler can use: the built-in set, optionally extended or overridden by
/// the `.pipeline` files of a directory (`pipelines/presets`), so users add sources and sinks
/// without recompiling.
public struct PresetLibrary: Sendable, Hashable {
    private var byName: [String: Preset]

    /// A library of exactly these presets; names must be unique.
    public init(_ presets: [Preset]) throws(PipelineCompileError) {
        var byName: [String: Preset] = [:]
        for preset in presets {
            guard byName[preset.name] == nil else {
                throw .invalidPreset(name: preset.name, reason: "defined twice")
            }
            byName[preset.name] = preset
        }
        self.byName = byName
    }

    /// All preset names, sorted.
    public var names: [String] { byName.keys.sorted() }

    /// All presets, sorted by name.
    public var presets: [Preset] { names.map { byName[$0]! } }

    public func preset(named name: String) -> Preset? { byName[name] }

    /// The preset of that name and kind, or an error naming what exists.
    public func preset(named name: String, kind: PresetKind) throws(PipelineCompileError) -> Preset {
        guard let preset = byName[name] else {
            throw .unknownPreset(name: name, available: presets.filter { $0.kind == kind }.map(\.name))
        }
        guard preset.kind == kind else { throw .presetKindMismatch(name: name, expected: kind, actual: preset.kind) }
        return preset
    }

    /// This library with `others` added; a preset of the same name replaces the existing one.
    public func overriding(with others: [Preset]) -> PresetLibrary {
        var copy = self
        for preset in others { copy.byName[preset.name] = preset }
        return copy
    }
}
