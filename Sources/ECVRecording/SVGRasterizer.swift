import Foundation
import GStreamer
import MediaRuntime

/// Turns an SVG document into a PNG with GStreamer's `rsvgdec` (librsvg, gst-plugins-bad) and
/// `pngenc`: the pictures are drawn once, as SVG, and rasterised, text included (Pango fonts).
enum SVGRasterizer {
    static func png(_ svg: String, timeout: Duration = .seconds(30)) async throws(RecordingReviewError) -> [UInt8] {
        let encoded: [Sample]
        do throws(RecordingError) {
            let caps: Caps
            do throws(GStreamerError) { caps = try Caps("image/svg+xml") } catch { throw .gstreamer(error) }
            encoded = try await PictureEncoder.run("appsrc name=input ! rsvgdec ! videoconvert ! pngenc ! appsink name=output",
                                                   input: caps, frames: [(Array(svg.utf8), 0)], timeout: timeout)
        } catch {
            throw RecordingReviewError(error)
        }
        guard let png = encoded.last?.bytes, !png.isEmpty else { throw .pipeline("rsvgdec and pngenc produced no picture") }
        return png
    }

    static func write(_ bytes: [UInt8], to url: URL) throws(RecordingReviewError) {
        do {
            try Data(bytes).write(to: url, options: .atomic)
        } catch {
            throw .cannotWrite(path: url.path, reason: error.localizedDescription)
        }
    }
}

extension RecordingInspection {
    /// Writes the timeline picture as SVG and/or PNG (same drawing, same size).
    public func writeTimeline(svg: URL? = nil, png: URL? = nil) async throws(RecordingReviewError) {
        let picture = TimelinePicture(self)
        if let svg { try SVGRasterizer.write(Array(picture.svg.utf8), to: svg) }
        if let png { try SVGRasterizer.write(try await SVGRasterizer.png(picture.svg), to: png) }
    }
}
