package agentloop

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"image/png"
	"sync"
	"time"

	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/internal/recent"
	xdraw "golang.org/x/image/draw"
)

// pngSignature starts every PNG file.
var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// errNotPNG is a capture that is not a PNG image.
var errNotPNG = errors.New("the screenshot is not a PNG image")

// Screen is one observation: the screenshot as captured (display
// resolution) and what the runtime derives from it. Device-side
// identifiers live in Ref and never reach the model.
type Screen struct {
	PNG        []byte
	Image      *image.RGBA
	SHA256     string
	CapturedAt time.Time
	// Ref is the device's handle for this observation (the SoloPi
	// observationId); empty for adb.
	Ref string

	mu      sync.Mutex
	derived *derivedImages // shared by the screens of one capture's bytes
}

// derivedImages are the model images made from one capture: computed once
// per resize policy and encoding, for every screen of those bytes.
type derivedImages struct {
	mu     sync.Mutex
	images []derivedImage
}

type derivedImage struct {
	pol coord.ResizePolicy
	enc chat.ImageEncoding
	img *chat.Image
}

// decoded remembers the last captures NewScreen decoded, by their SHA-256.
// A phone shows the same screen on many consecutive observations (a wait,
// a tap that changed nothing, the stability check before a verdict):
// decoding a capture, scaling it and encoding it for the model were most of
// an observation's CPU, and bytes with one digest give the same pixels. The
// images are never written to, so the screens share them.
var decoded = recent.List[string, *Screen]{Size: 4}

// NewScreen validates and decodes a PNG capture.
func NewScreen(data []byte, at time.Time) (*Screen, error) {
	if !bytes.HasPrefix(data, pngSignature) {
		return nil, errNotPNG
	}
	sum := sha256.Sum256(data)
	digest := hex.EncodeToString(sum[:])
	if d, ok := decoded.Get(digest); ok {
		return d.Recaptured(at), nil // the same bytes, by their digest
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("decode screenshot: %w", err)
	}
	s := &Screen{PNG: data, Image: toRGBA(img), SHA256: digest, CapturedAt: at}
	decoded.Put(digest, s)
	return s, nil
}

// ScreenFromImage wraps an already decoded image (tests, synthetic frames).
func ScreenFromImage(img image.Image, at time.Time) (*Screen, error) {
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("encode screenshot: %w", err)
	}
	sum := sha256.Sum256(buf.Bytes())
	return &Screen{PNG: buf.Bytes(), Image: toRGBA(img), SHA256: hex.EncodeToString(sum[:]), CapturedAt: at}, nil
}

// Recaptured is the same screen captured again at at: a new observation
// sharing the pixels and the model images already made from them.
func (s *Screen) Recaptured(at time.Time) *Screen {
	return &Screen{PNG: s.PNG, Image: s.Image, SHA256: s.SHA256, CapturedAt: at, derived: s.images()}
}

// images are the model images of this screen's capture, shared with its
// recaptures (made on first use: a Screen may be a literal).
func (s *Screen) images() *derivedImages {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.derived == nil {
		s.derived = &derivedImages{}
	}
	return s.derived
}

// Width and Height are the display size (the screenshot's size).
func (s *Screen) Width() int  { return s.Image.Rect.Dx() }
func (s *Screen) Height() int { return s.Image.Rect.Dy() }

// Frame is the geometry of this screen under a resize policy.
func (s *Screen) Frame(pol coord.ResizePolicy) coord.Frame {
	iw, ih := pol.ImageSize(s.Width(), s.Height())
	return coord.Frame{ImageWidth: iw, ImageHeight: ih, DisplayWidth: s.Width(), DisplayHeight: s.Height()}
}

// ModelImage returns the image sent to the model: resized by pol and
// encoded by enc. It is computed once per capture, policy and encoding (a
// plan, its protocol retry, a risk review and the next observation of an
// unchanged screen share one encoding). A PNG
// capture that needs no resizing is sent as captured.
func (s *Screen) ModelImage(pol coord.ResizePolicy, enc chat.ImageEncoding) (*chat.Image, error) {
	d := s.images()
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, m := range d.images {
		if m.pol == pol && m.enc == enc {
			return m.img, nil
		}
	}
	iw, ih := pol.ImageSize(s.Width(), s.Height())
	var out *chat.Image
	if iw == s.Width() && ih == s.Height() && enc.Format == chat.ImagePNG && s.PNG != nil {
		out = &chat.Image{Data: s.PNG, Format: chat.ImagePNG, Width: iw, Height: ih}
	} else {
		var src image.Image = s.Image
		if iw != s.Width() || ih != s.Height() {
			dst := image.NewRGBA(image.Rect(0, 0, iw, ih))
			xdraw.ApproxBiLinear.Scale(dst, dst.Rect, s.Image, s.Image.Rect, xdraw.Src, nil)
			src = dst
		}
		var err error
		if out, err = chat.EncodeImage(src, enc, nil); err != nil {
			return nil, err
		}
	}
	d.images = append(d.images, derivedImage{pol: pol, enc: enc, img: out})
	return out, nil
}

// Unobservable reports a near-uniform black frame: what FLAG_SECURE
// screens and failed captures look like. Such a frame is evidence of
// nothing, so the runtime asks for a human instead of planning on it.
func (s *Screen) Unobservable() bool {
	r := s.Image.Rect
	const grid = 64
	var n, sum, sumSq float64
	for gy := 0; gy < grid; gy++ {
		y := r.Min.Y + gy*r.Dy()/grid
		for gx := 0; gx < grid; gx++ {
			x := r.Min.X + gx*r.Dx()/grid
			o := s.Image.PixOffset(x, y)
			p := s.Image.Pix[o : o+3 : o+3]
			l := 0.299*float64(p[0]) + 0.587*float64(p[1]) + 0.114*float64(p[2])
			sum += l
			sumSq += l * l
			n++
		}
	}
	mean := sum / n
	variance := sumSq/n - mean*mean
	return mean < 2 && variance < 1
}

// toRGBA converts any image to *image.RGBA with origin (0,0).
func toRGBA(img image.Image) *image.RGBA {
	if r, ok := img.(*image.RGBA); ok && r.Rect.Min == (image.Point{}) {
		return r
	}
	b := img.Bounds()
	dst := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	xdraw.Draw(dst, dst.Rect, img, b.Min, xdraw.Src)
	return dst
}
