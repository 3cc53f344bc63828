// Package mp4check reads an MP4 (ISO BMFF) file far enough for tests to
// tell that it is playable: the box tree is well formed, it has a video
// track with a sample table, every sample lies inside the file, and the
// samples of a JPEG ("mp4v" with object type 0x6C) track decode as images.
// It is a reader for tests, not a demuxer.
package mp4check

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image/jpeg"
)

// Info describes a checked file's first video track.
type Info struct {
	Width, Height int
	Frames        int    // samples in the track
	DurationMs    int64  // track duration in milliseconds
	Codec         string // sample entry type (mp4v, avc1, ...)
	Decoded       int    // samples decoded as JPEG (all of them for an MJPEG track)
}

type box struct {
	typ  string
	body []byte
}

var containers = map[string]bool{"moov": true, "trak": true, "mdia": true, "minf": true, "stbl": true, "dinf": true, "edts": true}

// boxes splits b into its boxes (32-bit and 64-bit sizes; size 0 runs to
// the end).
func boxes(b []byte) ([]box, error) {
	var out []box
	for len(b) > 0 {
		if len(b) < 8 {
			return nil, fmt.Errorf("truncated box header (%d bytes left)", len(b))
		}
		size := uint64(binary.BigEndian.Uint32(b))
		typ := string(b[4:8])
		head := uint64(8)
		switch size {
		case 0:
			size = uint64(len(b))
		case 1:
			if len(b) < 16 {
				return nil, fmt.Errorf("truncated large %q box", typ)
			}
			size, head = binary.BigEndian.Uint64(b[8:]), 16
		}
		if size < head || size > uint64(len(b)) {
			return nil, fmt.Errorf("box %q of size %d does not fit in %d bytes", typ, size, len(b))
		}
		out = append(out, box{typ: typ, body: b[head:size]})
		b = b[size:]
	}
	return out, nil
}

func find(bs []box, typ string) (box, bool) {
	for _, b := range bs {
		if b.typ == typ {
			return b, true
		}
	}
	return box{}, false
}

// path descends through containers by type.
func path(bs []box, types ...string) (box, error) {
	var cur box
	for i, t := range types {
		b, ok := find(bs, t)
		if !ok {
			return box{}, fmt.Errorf("no %q box", t)
		}
		cur = b
		if i < len(types)-1 {
			kids, err := boxes(b.body)
			if err != nil {
				return box{}, fmt.Errorf("inside %q: %w", t, err)
			}
			bs = kids
		}
	}
	return cur, nil
}

func u32s(b []byte, off, n int) ([]uint32, error) {
	if off+4*n > len(b) || n < 0 {
		return nil, errors.New("table runs past its box")
	}
	out := make([]uint32, n)
	for i := range out {
		out[i] = binary.BigEndian.Uint32(b[off+4*i:])
	}
	return out, nil
}

// Check validates data and describes its first video track.
func Check(data []byte) (Info, error) {
	var info Info
	top, err := boxes(data)
	if err != nil {
		return info, err
	}
	if len(top) == 0 || top[0].typ != "ftyp" {
		return info, errors.New("the file does not start with an ftyp box")
	}
	if _, ok := find(top, "mdat"); !ok {
		return info, errors.New("no mdat box")
	}
	moov, err := path(top, "moov")
	if err != nil {
		return info, err
	}
	moovKids, err := boxes(moov.body)
	if err != nil {
		return info, fmt.Errorf("inside moov: %w", err)
	}
	// The first trak whose handler is "vide".
	var stbl []box
	for _, t := range moovKids {
		if t.typ != "trak" {
			continue
		}
		kids, err := boxes(t.body)
		if err != nil {
			return info, fmt.Errorf("inside trak: %w", err)
		}
		hdlr, err := path(kids, "mdia", "hdlr")
		if err != nil || len(hdlr.body) < 12 || string(hdlr.body[8:12]) != "vide" {
			continue
		}
		mdhd, err := path(kids, "mdia", "mdhd")
		if err != nil || len(mdhd.body) < 20 || mdhd.body[0] != 0 {
			return info, errors.New("the video track has no version-0 mdhd")
		}
		if ts := binary.BigEndian.Uint32(mdhd.body[12:]); ts > 0 {
			info.DurationMs = int64(binary.BigEndian.Uint32(mdhd.body[16:])) * 1000 / int64(ts)
		}
		st, err := path(kids, "mdia", "minf", "stbl")
		if err != nil {
			return info, err
		}
		if stbl, err = boxes(st.body); err != nil {
			return info, fmt.Errorf("inside stbl: %w", err)
		}
		break
	}
	if stbl == nil {
		return info, errors.New("no video track")
	}
	return checkSamples(data, stbl, info)
}

func checkSamples(data []byte, stbl []box, info Info) (Info, error) {
	stsd, ok := find(stbl, "stsd")
	if !ok || len(stsd.body) < 8+8+78 {
		return info, errors.New("no usable stsd")
	}
	entry := stsd.body[8:]
	info.Codec = string(entry[4:8])
	info.Width = int(binary.BigEndian.Uint16(entry[8+24:]))
	info.Height = int(binary.BigEndian.Uint16(entry[8+26:]))
	jpegTrack := info.Codec == "mp4v" && declaresJPEG(entry)
	stsz, ok := find(stbl, "stsz")
	if !ok || len(stsz.body) < 12 {
		return info, errors.New("no stsz")
	}
	fixed := binary.BigEndian.Uint32(stsz.body[4:])
	n := int(binary.BigEndian.Uint32(stsz.body[8:]))
	sizes := make([]uint32, n)
	if fixed == 0 {
		var err error
		if sizes, err = u32s(stsz.body, 12, n); err != nil {
			return info, fmt.Errorf("stsz: %w", err)
		}
	} else {
		for i := range sizes {
			sizes[i] = fixed
		}
	}
	info.Frames = n
	stco, ok := find(stbl, "stco")
	if !ok || len(stco.body) < 8 {
		return info, errors.New("no stco")
	}
	chunks, err := u32s(stco.body, 8, int(binary.BigEndian.Uint32(stco.body[4:])))
	if err != nil {
		return info, fmt.Errorf("stco: %w", err)
	}
	stsc, ok := find(stbl, "stsc")
	if !ok || len(stsc.body) < 8 {
		return info, errors.New("no stsc")
	}
	runs, err := u32s(stsc.body, 8, 3*int(binary.BigEndian.Uint32(stsc.body[4:])))
	if err != nil || len(runs) == 0 {
		return info, errors.New("stsc: no runs")
	}
	// Walk chunk by chunk: run r covers chunks [first_r, first_{r+1}).
	sample := 0
	for ci := range chunks {
		per := uint32(0)
		for r := 0; r < len(runs); r += 3 {
			if uint32(ci+1) >= runs[r] {
				per = runs[r+1]
			}
		}
		off := uint64(chunks[ci])
		for k := uint32(0); k < per && sample < n; k++ {
			end := off + uint64(sizes[sample])
			if end > uint64(len(data)) {
				return info, fmt.Errorf("sample %d runs past the end of the file", sample+1)
			}
			if jpegTrack {
				if _, err := jpeg.Decode(bytes.NewReader(data[off:end])); err != nil {
					return info, fmt.Errorf("sample %d is not a decodable JPEG: %w", sample+1, err)
				}
				info.Decoded++
			}
			off = end
			sample++
		}
	}
	if sample != n {
		return info, fmt.Errorf("the chunk table covers %d of %d samples", sample, n)
	}
	return info, nil
}

// declaresJPEG reports whether a sample entry's esds has a
// DecoderConfigDescriptor (tag 4, one-byte length) with object type 0x6C.
func declaresJPEG(entry []byte) bool {
	i := bytes.Index(entry, []byte("esds"))
	if i < 0 {
		return false
	}
	for j := i + 4; j+2 < len(entry); j++ {
		if entry[j] == 0x04 && entry[j+2] == 0x6C {
			return true
		}
	}
	return false
}
