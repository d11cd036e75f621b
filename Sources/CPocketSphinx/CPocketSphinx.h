// pocketsphinx 0.8+5prealpha (Debian 12's libpocketsphinx-dev) with sphinxbase: the decoder,
// its command-line style configuration, and JSGF grammars. Used only by ECVSpeech.
#include <pocketsphinx.h>
#include <cmd_ln.h>
