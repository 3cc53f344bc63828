package chat

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"time"

	"github.com/solopi-dev/solopi/clock"
)

// Image formats of the screenshot sent to the model.
const (
	ImagePNG  = "png"
	ImageJPEG = "jpeg"
)

// DefaultImageQuality is the JPEG quality for real endpoints: a 591×1280
// phone screen drops to a fraction of its PNG size while flat UI colours
// and glyph edges stay readable.
const DefaultImageQuality = 85

// ImageEncoding is how screenshots are encoded for the model. PNG is
// lossless and large; JPEG is what most vision endpoints resize to anyway.
type ImageEncoding struct {
	Format string `json:"format"`
	// Quality is the JPEG quality, 1..100 (ignored for PNG).
	Quality int `json:"quality,omitempty"`
}

// DefaultImageEncoding is JPEG at DefaultImageQuality.
func DefaultImageEncoding() ImageEncoding {
	return ImageEncoding{Format: ImageJPEG, Quality: DefaultImageQuality}
}

// Validate checks the format and the quality.
func (e ImageEncoding) Validate() error {
	switch e.Format {
	case ImagePNG:
		return nil
	case ImageJPEG:
		if e.Quality < 1 || e.Quality > 100 {
			return fmt.Errorf("the JPEG image quality must be between 1 and 100")
		}
		return nil
	}
	return fmt.Errorf("the model image format must be png or jpeg, not %q", e.Format)
}

func (e ImageEncoding) String() string {
	if e.Format == ImageJPEG {
		return fmt.Sprintf("jpeg/q%d", e.Quality)
	}
	return e.Format
}

// Image is one image as sent to the model: resized by the policy,
// encoded, and how long the encoding took.
type Image struct {
	Data       []byte
	Format     string
	Width      int
	Height     int
	EncodeTime time.Duration
}

// MIME is the image's media type.
func (m *Image) MIME() string { return "image/" + m.Format }

// DataURL is the image as an OpenAI image_url.
func (m *Image) DataURL() string {
	return "data:" + m.MIME() + ";base64," + base64.StdEncoding.EncodeToString(m.Data)
}

// EncodeImage encodes img for the model. PNG uses the fastest compression:
// the size that matters is the one the model bills for, which JPEG
// addresses; PNG is the lossless choice, not the small one.
func EncodeImage(img image.Image, enc ImageEncoding, clk clock.Clock) (*Image, error) {
	clk = clock.Or(clk)
	start := clk.Now()
	var buf bytes.Buffer
	var err error
	switch enc.Format {
	case ImageJPEG:
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: enc.Quality})
	case ImagePNG, "":
		enc.Format = ImagePNG
		err = (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img)
	default:
		err = fmt.Errorf("unknown image format %q", enc.Format)
	}
	if err != nil {
		return nil, fmt.Errorf("encode the model image: %w", err)
	}
	b := img.Bounds()
	return &Image{Data: buf.Bytes(), Format: enc.Format, Width: b.Dx(), Height: b.Dy(), EncodeTime: clk.Now().Sub(start)}, nil
}
