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


/* libv4l2's open and ioctl are variadic, which Swift cannot call: fixed-arity forms. */
static inline int ll_v4l2_open(const char *path, int flags) {
    return v4l2_open(path, flags);
}

static inline int ll_v4l2_ioctl(int fd, unsigned long request, void *arg) {
    return v4l2_ioctl(fd, request, arg);
}

/* Pixel formats (built with the v4l2_fourcc macro) and camera-class control ids. */
static const unsigned int LL_V4L2_PIX_FMT_YUYV = V4L2_PIX_FMT_YUYV;
static const unsigned int LL_V4L2_PIX_FMT_NV12 = V4L2_PIX_FMT_NV12;
static const unsigned int LL_V4L2_PIX_FMT_YUV420 = V4L2_PIX_FMT_YUV420;
static const unsigned int LL_V4L2_PIX_FMT_MJPEG = V4L2_PIX_FMT_MJPEG;
static const unsigned int LL_V4L2_CID_ZOOM_ABSOLUTE = V4L2_CID_ZOOM_ABSOLUTE;
static const unsigned int LL_V4L2_CID_FOCUS_ABSOLUTE = V4L2_CID_FOCUS_ABSOLUTE;
static const unsigned int LL_V4L2_CID_FOCUS_AUTO = V4L2_CID_FOCUS_AUTO;
static const unsigned int LL_V4L2_CID_EXPOSURE_ABSOLUTE = V4L2_CID_EXPOSURE_ABSOLUTE;
static const unsigned int LL_V4L2_FMT_FLAG_EMULATED = V4L2_FMT_FLAG_EMULATED;
static const unsigned int LL_V4L2_CAP_VIDEO_CAPTURE = V4L2_CAP_VIDEO_CAPTURE;
static const unsigned int LL_V4L2_CAP_STREAMING = V4L2_CAP_STREAMING;
static const unsigned int LL_V4L2_CAP_DEVICE_CAPS = V4L2_CAP_DEVICE_CAPS;
static const unsigned int LL_V4L2_CTRL_FLAG_DISABLED = V4L2_CTRL_FLAG_DISABLED;

#endif
