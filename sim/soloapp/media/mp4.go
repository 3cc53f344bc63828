package media

// A tiny but real MP4 writer for the simulated screen recorder: an ISO
// BMFF file (ftyp, moov, mdat) with one video track whose samples are
// baseline JPEG frames (sample entry "mp4v" with the JPEG object type
// 0x6C in its esds), which FFmpeg and most players decode. Using JPEG
// keeps the encoder in the standard library.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
)

// mp4Frames is how many frames a recording holds at most; each frame lasts
// as long as needed to cover the recording's duration.
const mp4MaxFrames = 8

// BuildMP4 returns an MP4 of w×h lasting durationMs, with frames that
// differ (a moving bar) so a visual difference analysis has something to
// find.
func BuildMP4(w, h int, durationMs int64) ([]byte, error) {
	if durationMs < 1 {
		durationMs = 1
	}
	const timescale = 1000
	n := int(min(int64(mp4MaxFrames), max(1, durationMs/500)))
	frames := make([][]byte, n)
	for i := range frames {
		f, err := jpegFrame(w, h, i, n)
		if err != nil {
			return nil, err
		}
		frames[i] = f
	}
	// Sample durations: equal slices, the last one takes the remainder.
	durs := make([]uint32, n)
	each := durationMs / int64(n)
	for i := range durs {
		durs[i] = uint32(each)
	}
	durs[n-1] = uint32(durationMs - each*int64(n-1))

	ftyp := box("ftyp", []byte("isom"), u32(512), []byte("isomiso2mp41"))
	// mdat comes after moov; its payload offset is needed by stco, and
	// moov's size does not depend on the offset value, so build twice.
	build := func(mdatOffset uint32) []byte {
		var sizes, stts []byte
		sizes = append(u32(0), u32(uint32(n))...)
		for _, f := range frames {
			sizes = append(sizes, u32(uint32(len(f)))...)
		}
		stts = u32(uint32(n))
		for _, d := range durs {
			stts = append(stts, u32(1)...)
			stts = append(stts, u32(d)...)
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
			fullBox("mdhd", 0, 0, u32(0), u32(0), u32(timescale), u32(uint32(durationMs)), u16(0x55c4), u16(0)),
			fullBox("hdlr", 0, 0, u32(0), []byte("vide"), u32(0), u32(0), u32(0), []byte("VideoHandler\x00")),
			minf,
		)
		tkhd := fullBox("tkhd", 0, 3, u32(0), u32(0), u32(1), u32(0), u32(uint32(durationMs)),
			u32(0), u32(0), u16(0), u16(0), u16(0), u16(0), matrix(), u32(uint32(w)<<16), u32(uint32(h)<<16))
		mvhd := fullBox("mvhd", 0, 0, u32(0), u32(0), u32(timescale), u32(uint32(durationMs)),
			u32(0x00010000), u16(0x0100), u16(0), u32(0), u32(0), matrix(), make([]byte, 24), u32(2))
		return box("moov", mvhd, box("trak", tkhd, mdia))
	}
	moov := build(0)
	offset := uint32(len(ftyp) + len(moov) + 8)
	moov = build(offset)
	var payload []byte
	for _, f := range frames {
		payload = append(payload, f...)
	}
	out := append(append(ftyp, moov...), box("mdat", payload)...)
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

func jpegFrame(w, h, i, n int) ([]byte, error) {
	// Very large recordings are encoded at a reduced JPEG size (decoders
	// scale to the track size) so the simulator never spends long here.
	for w*h > 1<<20 {
		w, h = w/2, h/2
	}
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.RGBA{R: 30, G: 30, B: 40, A: 255}), image.Point{}, draw.Src)
	bar := w * i / max(1, n)
	draw.Draw(img, image.Rect(bar, 0, bar+max(1, w/max(1, n)), h),
		image.NewUniform(color.RGBA{R: 240, G: 200, B: 40, A: 255}), image.Point{}, draw.Src)
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 50}); err != nil {
		return nil, fmt.Errorf("encode frame %d: %w", i, err)
	}
	return buf.Bytes(), nil
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

// Mp4Box is one parsed box (for validation and tests).
type Mp4Box struct {
	Type     string
	Size     int
	Children []Mp4Box
}

// ParseMP4 walks the box tree; containers listed here are descended into.
func ParseMP4(data []byte) ([]Mp4Box, bool) {
	containers := map[string]int{"moov": 0, "trak": 0, "mdia": 0, "minf": 0, "dinf": 0, "stbl": 0}
	var walk func(b []byte) ([]Mp4Box, bool)
	walk = func(b []byte) ([]Mp4Box, bool) {
		var out []Mp4Box
		for len(b) > 0 {
			if len(b) < 8 {
				return nil, false
			}
			size := int(binary.BigEndian.Uint32(b))
			if size < 8 || size > len(b) {
				return nil, false
			}
			bx := Mp4Box{Type: string(b[4:8]), Size: size}
			if _, c := containers[bx.Type]; c {
				kids, good := walk(b[8:size])
				if !good {
					return nil, false
				}
				bx.Children = kids
			}
			out = append(out, bx)
			b = b[size:]
		}
		return out, true
	}
	return walk(data)
}
