package fakemodel

import (
	"bytes"
	"encoding/base64"
	"image/png"
	"reflect"
	"strconv"
	"testing"

	"github.com/solopi-dev/solopi/internal/recent"
)

// screensKept is the test cache's size (small: each screen is a PNG to
// encode).
const screensKept = 2

// TestScreenMemo: a screen sent again is decoded and read once, with the
// answers a fresh decode gives; the cache keeps only the latest screens.
func TestScreenMemo(t *testing.T) {
	t.Parallel()
	m := screenMemo{list: recent.List[string, *screenEntry]{Size: screensKept}}
	url := func(n int) string {
		var buf bytes.Buffer
		if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, CounterScreen(strconv.Itoa(n))); err != nil {
			t.Fatal(err)
		}
		return "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())
	}
	first := url(7)
	a, format, err := m.decode(first)
	if err != nil || format != "png" {
		t.Fatalf("decode: %v %q", err, format)
	}
	b, _, err := m.decode(first)
	if err != nil || b != a {
		t.Fatalf("the same URL decoded again: %p vs %p (%v)", b, a, err)
	}
	fresh, _, err := decodeDataURL(first)
	if err != nil || !bytes.Equal(fresh.Pix, a.Pix) {
		t.Fatalf("the cached pixels differ from a fresh decode (%v)", err)
	}
	if got, want := m.read(a), read(fresh); !reflect.DeepEqual(got, want) || got.counter != 7 {
		t.Fatalf("read through the cache %+v, fresh %+v", got, want)
	}
	if got := m.read(fresh); got.counter != 7 {
		t.Fatalf("an image the cache does not hold is read afresh: %+v", got)
	}
	for n := range screensKept {
		if _, _, err := m.decode(url(100 + n)); err != nil {
			t.Fatal(err)
		}
	}
	if again, _, _ := m.decode(first); again == a {
		t.Fatal("the oldest screen was not evicted")
	}
	if _, _, err := m.decode("data:image/gif;base64,AAAA"); err == nil {
		t.Fatal("an undecodable image was accepted")
	}
}
