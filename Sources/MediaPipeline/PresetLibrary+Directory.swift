import Foundation

extension PresetLibrary {
    /// The built-in presets overridden and extended by every `<name>.pipeline` file in `directory`
    /// (the runtime passes `pipelines/presets`). Any invalid file fails the load, naming the file,
    /// so a typo is found at startup rather than mid-call.
    public static func loading(directory: URL, over base: PresetLibrary = .builtIn) throws(PipelineCompileError) -> PresetLibrary {
        let files: [URL]
        do {
            files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
                .filter { $0.pathExtension == "pipeline" }
                .sorted { $0.lastPathComponent < $1.lastPathComponent }
        } catch {
            throw .invalidPreset(name: directory.path, reason: "cannot list the preset directory: \(error.localizedDescription)")
        }
        var loaded: [Preset] = []
        for file in files {
            let name = file.deletingPathExtension().lastPathComponent
            let text: String
            do {
                text = try String(contentsOf: file, encoding: .utf8)
            } catch {
                throw .invalidPreset(name: name, reason: "cannot read \(file.path): \(error.localizedDescription)")
            }
            loaded.append(try Preset.parse(name: name, text: text))
        }
        return base.overriding(with: loaded)
    }
}
