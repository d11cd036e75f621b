// The MediaPipeline values ECVRecording's API names, re-exported so `import ECVRecording` is enough.
@_exported import struct MediaPipeline.RecordingChapter
