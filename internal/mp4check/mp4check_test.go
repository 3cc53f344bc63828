package mp4check

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/sim/soloapp/media"
)

func TestSoloPiRecordingIsPlayable(t *testing.T) {
	t.Parallel()
	data, err := media.BuildMP4(320, 240, 2300)
	if err != nil {
		t.Fatal(err)
	}
	info, err := Check(data)
	if err != nil {
		t.Fatal(err)
	}
	if info.Width != 320 || info.Height != 240 || info.Frames != 4 || info.Decoded != 4 || info.DurationMs != 2300 || info.Codec != "mp4v" {
		t.Fatalf("info = %+v", info)
	}
}

func TestBrokenFilesAreRefused(t *testing.T) {
	t.Parallel()
	good, err := media.BuildMP4(160, 128, 1000)
	if err != nil {
		t.Fatal(err)
	}
	truncated := good[:len(good)-100]
	badJPEG := append([]byte(nil), good...)
	// The mdat payload starts 8 bytes after the mdat header at the end of
	// moov; overwrite the first sample's JPEG marker.
	i := strings.Index(string(badJPEG), "mdat")
	badJPEG[i+4], badJPEG[i+5] = 0, 0
	noFtyp := append([]byte(nil), good...)
	copy(noFtyp[4:8], "free")
	hugeBox := append([]byte(nil), good...)
	binary.BigEndian.PutUint32(hugeBox, 1<<30)
	for name, data := range map[string][]byte{
		"empty": nil, "truncated": truncated, "bad jpeg": badJPEG, "no ftyp": noFtyp, "huge box": hugeBox,
	} {
		if _, err := Check(data); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
