// Package mp4 is the simulator's one MP4 writer: an ISO BMFF file (ftyp,
// moov, mdat) with one video track whose samples are baseline JPEG frames
// (sample entry "mp4v" with the JPEG object type 0x6C in its esds), which
// FFmpeg and most players decode. Using JPEG keeps the encoder in the
// standard library. SoloPi's own screen recording (sim/soloapp/media) and
// the phone's adb screenrecord (sim/android) both write through it.
package mp4

import (
	"encoding/binary"
	"errors"
)

// Frame is one JPEG sample and how long it is shown, in milliseconds.
type Frame struct {
	JPEG       []byte
	DurationMs uint32
}

// MJPEG returns an MP4 of a w×h track holding frames in order (timescale
// 1000, every frame a sync sample). At least one frame is required.
func MJPEG(w, h int, frames []Frame) ([]byte, error) {
	n := len(frames)
	if n == 0 {
		return nil, errors.New("mp4: no frames")
	}
	const timescale = 1000
	var total uint32
	for _, f := range frames {
		total += f.DurationMs
	}
	ftyp := box("ftyp", []byte("isom"), u32(512), []byte("isomiso2mp41"))
	// mdat comes after moov; its payload offset is needed by stco, and
	// moov's size does not depend on the offset value, so build twice.
	build := func(mdatOffset uint32) []byte {
		sizes := append(u32(0), u32(uint32(n))...)
		for _, f := range frames {
			sizes = append(sizes, u32(uint32(len(f.JPEG)))...)
		}
		// stts: one entry per frame (count 1, its duration).
		stts := u32(uint32(n))
		for _, f := range frames {
			stts = append(stts, u32(1)...)
			stts = append(stts, u32(f.DurationMs)...)
		}
		stbl := box("stbl",
			fullBox("stsd", 0, 0, u32(1), sampleEntry(w, h)),
			fullBox("stts", 0, 0, stts),
			fullBox("stss", 0, 0, u32(uint32(n)), syncSamples(n)),
			fullBox("stsc", 0, 0, u32(1), u32(1), u32(uint32(n)), u32(1)),
			fullBox("stsz", 0, 0, sizes),
			fullBox("stco", 0, 0, u32(1), u32(mdatOffset)),
		)
		minf := box("minf",
			fullBox("vmhd", 0, 1, u16(0), u16(0), u16(0), u16(0)),
			box("dinf", fullBox("dref", 0, 0, u32(1), fullBox("url ", 0, 1))),
			stbl,
		)
		mdia := box("mdia",
			fullBox("mdhd", 0, 0, u32(0), u32(0), u32(timescale), u32(total), u16(0x55c4), u16(0)),
			fullBox("hdlr", 0, 0, u32(0), []byte("vide"), u32(0), u32(0), u32(0), []byte("VideoHandler\x00")),
			minf,
		)
		tkhd := fullBox("tkhd", 0, 3, u32(0), u32(0), u32(1), u32(0), u32(total),
			u32(0), u32(0), u16(0), u16(0), u16(0), u16(0), matrix(), u32(uint32(w)<<16), u32(uint32(h)<<16))
		mvhd := fullBox("mvhd", 0, 0, u32(0), u32(0), u32(timescale), u32(total),
			u32(0x00010000), u16(0x0100), u16(0), u32(0), u32(0), matrix(), make([]byte, 24), u32(2))
		return box("moov", mvhd, box("trak", tkhd, mdia))
	}
	moov := build(0)
	moov = build(uint32(len(ftyp) + len(moov) + 8))
	size := 8
	for _, f := range frames {
		size += len(f.JPEG)
	}
	out := make([]byte, 0, len(ftyp)+len(moov)+size)
	out = append(append(out, ftyp...), moov...)
	out = append(out, u32(uint32(size))...)
	out = append(out, "mdat"...)
	for _, f := range frames {
		out = append(out, f.JPEG...)
	}
	return out, nil
}

func syncSamples(n int) []byte {
	var b []byte
	for i := 1; i <= n; i++ {
		b = append(b, u32(uint32(i))...)
	}
	return b
}

// sampleEntry is an "mp4v" visual sample entry whose esds declares JPEG.
func sampleEntry(w, h int) []byte {
	// ES_Descriptor(3) > DecoderConfigDescriptor(4) + SLConfigDescriptor(6).
	dcd := append([]byte{0x6C, 0x11, 0, 0, 0}, u32(5000000)...)
	dcd = append(dcd, u32(2500000)...)
	es := append([]byte{0, 1, 0}, descr(4, dcd)...)
	es = append(es, descr(6, []byte{2})...)
	esds := fullBox("esds", 0, 0, descr(3, es))
	compressor := make([]byte, 32)
	copy(compressor[1:], "SoloPi JPEG")
	compressor[0] = byte(len("SoloPi JPEG"))
	return box("mp4v",
		make([]byte, 6), u16(1), // reserved, data_reference_index
		make([]byte, 16), u16(uint16(w)), u16(uint16(h)),
		u32(0x00480000), u32(0x00480000), u32(0), u16(1),
		compressor, u16(0x0018), u16(0xFFFF), esds)
}

func descr(tag byte, body []byte) []byte {
	return append([]byte{tag, byte(len(body))}, body...)
}

func matrix() []byte {
	m := []uint32{0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000}
	var b []byte
	for _, v := range m {
		b = append(b, u32(v)...)
	}
	return b
}

func u32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

func u16(v uint16) []byte { return binary.BigEndian.AppendUint16(nil, v) }

func box(typ string, parts ...[]byte) []byte {
	size := 8
	for _, p := range parts {
		size += len(p)
	}
	out := make([]byte, 0, size)
	out = append(out, u32(uint32(size))...)
	out = append(out, typ...)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func fullBox(typ string, version byte, flags uint32, parts ...[]byte) []byte {
	head := []byte{version, byte(flags >> 16), byte(flags >> 8), byte(flags)}
	return box(typ, append([][]byte{head}, parts...)...)
}
