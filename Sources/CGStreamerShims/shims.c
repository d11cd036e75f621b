// All shims are static inline in the header; this file exists because SwiftPM needs a source per C target.
#include "CGStreamerShims.h"
