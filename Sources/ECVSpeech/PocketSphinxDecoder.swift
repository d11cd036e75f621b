internal import CPocketSphinx
import Foundation
import MediaPipeline

/// The one file of ECVSpeech that touches C: a pocketsphinx decoder (0.8+5prealpha API, with
/// sphinxbase's configuration), owned here and freed in deinit. Not thread-safe by itself;
/// `PocketSphinxTranscriber` serialises every use behind its lock.
final class PocketSphinxDecoder {
    private let decoder: OpaquePointer
    private let configuration: OpaquePointer

    /// Loads the acoustic model and dictionary; `languageModel` nil starts with no search (a
    /// grammar is set next).
    init(acousticModel: String, dictionary: String, languageModel: String?) throws(AppMediaError) {
        var arguments = ["ecv-speech", "-hmm", acousticModel, "-dict", dictionary, "-logfn", "/dev/null", "-samprate", "16000"]
        if let languageModel { arguments += ["-lm", languageModel] }
        var pointers: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
        defer { for pointer in pointers { free(pointer) } }
        guard let configuration = cmd_ln_parse_r(nil, ps_args(), Int32(arguments.count), &pointers, 1) else {
            throw .speech("pocketsphinx refused its configuration (\(arguments.dropFirst().joined(separator: " ")))")
        }
        guard let decoder = ps_init(configuration) else {
            cmd_ln_free_r(configuration)
            throw .speech("pocketsphinx could not load its model from \(acousticModel)")
        }
        self.configuration = configuration
        self.decoder = decoder
    }

    deinit {
        ps_free(decoder)
        cmd_ln_free_r(configuration)
    }

    /// Whether the dictionary knows `word`.
    func knows(_ word: String) -> Bool {
        guard let phones = ps_lookup_word(decoder, word) else { return false }
        free(phones)
        return true
    }

    /// Makes `jsgf` (a JSGF grammar's text) the active search.
    func useGrammar(_ jsgf: String) throws(AppMediaError) {
        guard ps_set_jsgf_string(decoder, "phrases", jsgf) == 0, ps_set_search(decoder, "phrases") == 0 else {
            throw .speech("pocketsphinx refused the phrase grammar")
        }
    }

    func startUtterance() throws(AppMediaError) {
        guard ps_start_utt(decoder) == 0 else { throw .speech("pocketsphinx could not start an utterance") }
    }

    /// Feeds 16 kHz mono samples.
    func process(_ samples: [Int16]) throws(AppMediaError) {
        let searched = samples.withUnsafeBufferPointer { ps_process_raw(decoder, $0.baseAddress, $0.count, 0, 0) }
        guard searched >= 0 else { throw .speech("pocketsphinx failed to process audio") }
    }

    func endUtterance() throws(AppMediaError) {
        guard ps_end_utt(decoder) == 0 else { throw .speech("pocketsphinx could not end the utterance") }
    }

    /// The best hypothesis so far ("" when none).
    var hypothesis: String {
        var score: Int32 = 0
        return ps_get_hyp(decoder, &score).map { String(cString: $0) } ?? ""
    }
}
