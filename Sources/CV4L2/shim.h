// libv4l2 and the V4L2 UAPI, plus the ioctl request numbers (function-like
// macros built with _IOWR that Swift cannot import) as constants.
#ifndef LIVELINE_CV4L2_SHIM_H
#define LIVELINE_CV4L2_SHIM_H

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/videodev2.h>
#include <libv4l2.h>

static const unsigned long LL_VIDIOC_QUERYCAP = VIDIOC_QUERYCAP;
static const unsigned long LL_VIDIOC_ENUM_FMT = VIDIOC_ENUM_FMT;
static const unsigned long LL_VIDIOC_ENUM_FRAMESIZES = VIDIOC_ENUM_FRAMESIZES;
static const unsigned long LL_VIDIOC_ENUM_FRAMEINTERVALS = VIDIOC_ENUM_FRAMEINTERVALS;
static const unsigned long LL_VIDIOC_G_FMT = VIDIOC_G_FMT;
static const unsigned long LL_VIDIOC_S_FMT = VIDIOC_S_FMT;
static const unsigned long LL_VIDIOC_TRY_FMT = VIDIOC_TRY_FMT;
static const unsigned long LL_VIDIOC_G_PARM = VIDIOC_G_PARM;
static const unsigned long LL_VIDIOC_S_PARM = VIDIOC_S_PARM;
static const unsigned long LL_VIDIOC_REQBUFS = VIDIOC_REQBUFS;
static const unsigned long LL_VIDIOC_QUERYBUF = VIDIOC_QUERYBUF;
static const unsigned long LL_VIDIOC_QBUF = VIDIOC_QBUF;
static const unsigned long LL_VIDIOC_DQBUF = VIDIOC_DQBUF;
static const unsigned long LL_VIDIOC_STREAMON = VIDIOC_STREAMON;
static const unsigned long LL_VIDIOC_STREAMOFF = VIDIOC_STREAMOFF;
static const unsigned long LL_VIDIOC_QUERYCTRL = VIDIOC_QUERYCTRL;
static const unsigned long LL_VIDIOC_G_CTRL = VIDIOC_G_CTRL;
static const unsigned long LL_VIDIOC_S_CTRL = VIDIOC_S_CTRL;

static inline unsigned int ll_v4l2_fourcc(char a, char b, char c, char d) {
    return v4l2_fourcc(a, b, c, d);
}

#endif
