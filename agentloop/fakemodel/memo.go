package fakemodel

import (
	"image"
	"sync"

	"github.com/solopi-dev/solopi/internal/recent"
)

// screens remembers the last screenshots the fake decoded and what it read
// on them. An Agent run sends the same few screens over and over (the
// counter at 0 before every step, the history's earlier frames with every
// request), and decoding a PNG and finding its controls were most of the
// CPU of every test that drives a run. The cache is keyed by the whole data
// URL, compared byte for byte, so an answer is always the one a fresh
// decode gives; the images it hands out are never written to. A model
// image is a few MB decoded: eight are kept.
var screens = screenMemo{list: recent.List[string, *screenEntry]{Size: 8}}

type screenMemo struct {
	list recent.List[string, *screenEntry]
}

type screenEntry struct {
	img    *image.RGBA
	format string
	once   sync.Once
	read   screenRead
}

// decode is decodeDataURL through the cache.
func (m *screenMemo) decode(u string) (*image.RGBA, string, error) {
	if e, ok := m.list.Get(u); ok {
		return e.img, e.format, nil
	}
	img, format, err := decodeDataURL(u)
	if err != nil {
		return nil, "", err
	}
	m.list.Put(u, &screenEntry{img: img, format: format})
	return img, format, nil
}

// read is read(img) through the cache: computed once per decoded screen.
func (m *screenMemo) read(img *image.RGBA) screenRead {
	e, ok := m.list.Find(func(e *screenEntry) bool { return e.img == img })
	if !ok {
		return read(img)
	}
	e.once.Do(func() { e.read = read(img) })
	return e.read
}
