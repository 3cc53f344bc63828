package fakemodel

import (
	"image"
	"sync"
)

// screens remembers the last screenshots the fake decoded and what it read
// on them. An Agent run sends the same few screens over and over (the
// counter at 0 before every step, the history's earlier frames with every
// request), and decoding a PNG and finding its controls were most of the
// CPU of every test that drives a run. The cache is keyed by the whole data
// URL, compared byte for byte, so an answer is always the one a fresh
// decode gives; the images it hands out are never written to.
var screens screenMemo

// screensKept bounds the memory the cache holds (a model image is a few MB
// decoded).
const screensKept = 8

type screenMemo struct {
	mu      sync.Mutex
	entries []*screenEntry // most recent last
}

type screenEntry struct {
	url    string
	img    *image.RGBA
	format string
	once   sync.Once
	read   screenRead
}

// decode is decodeDataURL through the cache.
func (m *screenMemo) decode(u string) (*image.RGBA, string, error) {
	m.mu.Lock()
	for i, e := range m.entries {
		if e.url == u {
			m.entries = append(append(m.entries[:i:i], m.entries[i+1:]...), e)
			m.mu.Unlock()
			return e.img, e.format, nil
		}
	}
	m.mu.Unlock()
	img, format, err := decodeDataURL(u)
	if err != nil {
		return nil, "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.entries) == screensKept {
		m.entries = append(m.entries[:0], m.entries[1:]...)
	}
	m.entries = append(m.entries, &screenEntry{url: u, img: img, format: format})
	return img, format, nil
}

// read is read(img) through the cache: computed once per decoded screen.
func (m *screenMemo) read(img *image.RGBA) screenRead {
	m.mu.Lock()
	var hit *screenEntry
	for _, e := range m.entries {
		if e.img == img {
			hit = e
			break
		}
	}
	m.mu.Unlock()
	if hit == nil {
		return read(img)
	}
	hit.once.Do(func() { hit.read = read(img) })
	return hit.read
}
