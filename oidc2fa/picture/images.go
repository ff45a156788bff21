package picture

import (
	"crypto/sha256"
	"embed"
	"fmt"
	"regexp"
)

// Image is a picture a user may enroll with. It is shown scaled to the canonical Width ×
// Height space, so it should have that 4:3 aspect ratio.
type Image struct {
	// Name identifies the image in credentials and URLs: lower-case letters, digits and '-'.
	Name string
	// Title is what the person sees (and what a screen reader reads): "Harbour".
	Title string
	// ContentType is image/svg+xml, image/png, image/jpeg or image/webp.
	ContentType string
	// Data is the image file.
	Data []byte
}

//go:embed images/harbour.svg images/market.svg images/cafe.svg images/farm.svg images/study.svg images/beach.svg
var builtinFS embed.FS

// builtinTitles are the built-in images in the order they are offered.
var builtinTitles = []struct{ name, title string }{
	{"harbour", "Harbour"},
	{"market", "Market"},
	{"cafe", "Café"},
	{"farm", "Farm"},
	{"study", "Study"},
	{"beach", "Beach"},
}

// BuiltinImages returns the images visid ships, drawn for this purpose: scenes with many
// distinct objects, colours and edges all over the picture, so that points are easy to recall
// and do not cluster on a few hotspots. Each call returns a new slice.
func BuiltinImages() []Image {
	out := make([]Image, 0, len(builtinTitles))
	for _, b := range builtinTitles {
		data, err := builtinFS.ReadFile("images/" + b.name + ".svg")
		if err != nil {
			panic("picture: built-in image " + b.name + " is missing: " + err.Error()) // embedded at build time
		}
		out = append(out, Image{Name: b.name, Title: b.title, ContentType: "image/svg+xml", Data: data})
	}
	return out
}

var imageName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// imageSet is the images of a Config, by name, with their digests.
type imageSet struct {
	list   []*image
	byName map[string]*image
}

type image struct {
	Image
	digest []byte // SHA-256 of Data
}

func newImageSet(images []Image) (*imageSet, error) {
	if len(images) == 0 {
		return nil, fmt.Errorf("picture: Config.Images is empty")
	}
	s := &imageSet{byName: make(map[string]*image, len(images))}
	for _, im := range images {
		switch {
		case !imageName.MatchString(im.Name):
			return nil, fmt.Errorf("picture: image name %q: want lower-case letters, digits and '-'", im.Name)
		case s.byName[im.Name] != nil:
			return nil, fmt.Errorf("picture: two images are named %q", im.Name)
		case im.Title == "":
			return nil, fmt.Errorf("picture: image %q has no title", im.Name)
		case len(im.Data) == 0:
			return nil, fmt.Errorf("picture: image %q has no data", im.Name)
		}
		switch im.ContentType {
		case "image/svg+xml", "image/png", "image/jpeg", "image/webp":
		default:
			return nil, fmt.Errorf("picture: image %q: content type %q is not one of image/svg+xml, image/png, image/jpeg, image/webp", im.Name, im.ContentType)
		}
		sum := sha256.Sum256(im.Data)
		e := &image{Image: im, digest: sum[:]}
		e.Data = append([]byte(nil), im.Data...)
		s.list = append(s.list, e)
		s.byName[im.Name] = e
	}
	return s, nil
}
