// The FFmpeg headers LiveLine uses, plus the macros Swift cannot import,
// rewritten as inline functions (STYLE.md: C lives only in the C* targets).
#ifndef LIVELINE_CFFMPEG_SHIM_H
#define LIVELINE_CFFMPEG_SHIM_H

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/error.h>
#include <libavutil/hmac.h> // only for the test that checks LiveCore's HMAC-SHA256 against it
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
#include <libswresample/swresample.h>
#include <libavdevice/avdevice.h>
#include <libavutil/channel_layout.h>
#include <libavutil/samplefmt.h>
#include <libavutil/audio_fifo.h>
#include <errno.h>

static inline int ll_averror(int posixError) { return AVERROR(posixError); }
static inline int ll_averror_eof(void) { return AVERROR_EOF; }
static inline int ll_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int64_t ll_av_nopts_value(void) { return AV_NOPTS_VALUE; }
static inline AVRational ll_av_time_base_q(void) { return AV_TIME_BASE_Q; }

/// av_err2str is a macro over a compound literal; this is the function form.
static inline const char *ll_av_err2str(int errnum, char *buffer, size_t size) {
    return av_make_error_string(buffer, size, errnum);
}

#endif
