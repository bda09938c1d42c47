// Package dio knows what direct I/O (O_DIRECT) demands of a file and explains
// what went wrong when the kernel refuses a request.
//
// A file opened with O_DIRECT bypasses the page cache, and in exchange the
// kernel requires every request to be aligned: the file offset and the length
// to a multiple of the logical block size of the device, the buffer address to
// the device's DMA alignment. A misaligned request fails with EINVAL, which
// says nothing about which of the three was wrong. This package
//
//   - discovers the alignment of an open file ([ForFD], [ForFile], [ForPath]):
//     from statx(STATX_DIOALIGN) on Linux 6.1 and later, else from the block
//     device (ioctl BLKSSZGET, or /sys/dev/block/MAJ:MIN/queue), else a
//     conservative 4096; the [Alignment] value says where it came from and
//     offers the rounding helpers the I/O paths need;
//   - probes whether a directory's filesystem accepts O_DIRECT at all
//     ([Probe]), turning the bare EINVAL from open(2) into an error that names
//     the directory and the filesystem type and matches [ErrUnsupported];
//   - explains an EINVAL from an O_DIRECT request ([ExplainEINVAL]): which of
//     offset, length and buffer address is misaligned, and to what.
//
// Everything that needs the kernel is Linux only. On other systems the
// discovery functions return [Default] and [Probe] reports that direct I/O is
// unsupported, so that code using this package builds everywhere.
package dio
