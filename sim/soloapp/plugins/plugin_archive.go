package plugins

import (
	"archive/zip"
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

// Plugin archive validation: what the app checks in a ZIP before it
// installs it (desc.json, entry names, sizes, code and assets).
// pluginDesc is the validated desc.json (PatchDescription).
type pluginDesc struct {
	name, filter, jar, assetsZip string
	version                      float64
	soList                       []string
	raw                          []byte
}

// ValidatePluginArchive applies the archive and descriptor checks of an
// import (docs/device-protocol.md#plugins).
func ValidatePluginArchive(data []byte) (*pluginDesc, core.Obj) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, pluginFailure(protocol.ErrInvalidManifest, "Plugin archive is not a readable ZIP")
	}
	files, fail := checkZipEntries(zr.File, 512, 96*mib, 256*mib, false)
	if fail != nil {
		return nil, fail
	}
	var manifests []string
	for n := range files {
		parts := strings.Split(n, "/")
		if parts[len(parts)-1] == "desc.json" && len(parts) <= 2 && parts[0] != "__MACOSX" {
			manifests = append(manifests, n)
		}
	}
	switch len(manifests) {
	case 0:
		return nil, pluginFailure(protocol.ErrMissingManifest, "Plugin archive has no desc.json")
	case 1:
	default:
		return nil, pluginFailure(protocol.ErrAmbiguousManifest, "Plugin archive has more than one desc.json")
	}
	prefix := strings.TrimSuffix(manifests[0], "desc.json")
	for n := range files {
		if !strings.HasPrefix(n, prefix) && !strings.HasPrefix(n, "__MACOSX/") {
			return nil, pluginFailure(protocol.ErrInvalidArchiveLayout, "Plugin archive entries must share the manifest's directory")
		}
	}
	mf := files[manifests[0]]
	if mf.UncompressedSize64 > 64*1024 {
		return nil, pluginFailure(protocol.ErrManifestTooLarge, "desc.json is larger than 64 KiB")
	}
	raw, err := readZipFile(mf)
	if err != nil {
		return nil, pluginFailure(protocol.ErrInvalidManifest, "desc.json cannot be read")
	}
	var d struct {
		Name       string   `json:"name"`
		Version    *float64 `json:"version"`
		Filter     string   `json:"filter"`
		Jar        string   `json:"jar"`
		JarMd5     string   `json:"jarMd5"`
		SoList     []string `json:"soList"`
		SoMd5s     []string `json:"soMd5s"`
		PreloadSo  []string `json:"preloadSo"`
		AssetsZip  string   `json:"assetsZip"`
		AssetsMd5  string   `json:"assetsMd5"`
		MainClass  string   `json:"mainClass"`
		MainMethod string   `json:"mainMethod"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, pluginFailure(protocol.ErrInvalidManifest, "desc.json is not a valid plugin descriptor")
	}
	switch {
	case !protocol.ValidID(d.Name, 64):
		return nil, pluginFailure(protocol.ErrInvalidPluginName, "Plugin name is invalid")
	case d.Name == corePluginName:
		return nil, pluginFailure(protocol.ErrCorePluginProtected, "Core plugins cannot be replaced")
	case d.Version == nil || *d.Version <= 0:
		return nil, pluginFailure(protocol.ErrInvalidPluginVersion, "Plugin version must be greater than 0")
	case len([]rune(d.Filter)) > 256:
		return nil, pluginFailure(protocol.ErrInvalidPluginFilter, "Plugin filter is longer than 256 characters")
	case len(d.SoList) > 64 || len(d.SoList) != len(d.SoMd5s):
		return nil, pluginFailure(protocol.ErrPluginValidationFailed, "Plugin native library list is invalid")
	case (d.MainClass == "") != (d.MainMethod == ""), d.MainClass != "" && d.Jar == "":
		return nil, pluginFailure(protocol.ErrPluginValidationFailed, "mainClass and mainMethod require each other and a jar")
	case d.Jar == "" && len(d.SoList) == 0 && d.AssetsZip == "":
		return nil, pluginFailure(protocol.ErrEmptyPlugin, "Plugin has no payload")
	}
	for _, so := range d.PreloadSo {
		if !slices.Contains(d.SoList, so) {
			return nil, pluginFailure(protocol.ErrPluginValidationFailed, "preloadSo must be listed in soList")
		}
	}
	payload := func(name, sum string) ([]byte, core.Obj) {
		if sum == "" {
			return nil, pluginFailure(protocol.ErrMissingPayload, "Payload digest is missing for "+name)
		}
		f := files[prefix+name]
		if f == nil {
			return nil, pluginFailure(protocol.ErrMissingArchiveEntry, "Plugin archive entry is missing: "+name)
		}
		b, err := readZipFile(f)
		if err != nil {
			return nil, pluginFailure(protocol.ErrMissingArchiveEntry, "Plugin archive entry is unreadable: "+name)
		}
		h := md5.Sum(b)
		if !strings.EqualFold(hex.EncodeToString(h[:]), sum) {
			return nil, pluginFailure(protocol.ErrPayloadDigestMismatch, "Payload digest does not match: "+name)
		}
		return b, nil
	}
	if d.Jar != "" {
		if _, fail := payload(d.Jar, d.JarMd5); fail != nil {
			return nil, fail
		}
	}
	for i, so := range d.SoList {
		if _, fail := payload(so, d.SoMd5s[i]); fail != nil {
			return nil, fail
		}
	}
	if d.AssetsZip != "" {
		b, fail := payload(d.AssetsZip, d.AssetsMd5)
		if fail != nil {
			return nil, fail
		}
		nested, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return nil, pluginFailure(protocol.ErrPluginValidationFailed, "assets archive is not a readable ZIP")
		}
		if _, fail := checkZipEntries(nested.File, 1024, 64*mib, 128*mib, true); fail != nil {
			return nil, fail
		}
	}
	return &pluginDesc{name: d.Name, version: *d.Version, filter: d.Filter, jar: d.Jar, assetsZip: d.AssetsZip,
		soList: d.SoList, raw: raw}, nil
}

// checkZipEntries applies the entry-count, duplicate, path and size rules;
// assets selects the nested assets archive's error codes.
func checkZipEntries(entries []*zip.File, maxEntries int, maxEntry, maxTotal uint64, assets bool) (map[string]*zip.File, core.Obj) {
	codes := map[string]string{"limit": protocol.ErrArchiveEntryLimit, "dup": protocol.ErrDuplicateArchiveEntry,
		"empty": protocol.ErrEmptyArchive, "total": protocol.ErrArchiveExpansionLimit, "entry": protocol.ErrArchiveEntryTooLarge}
	if assets {
		codes = map[string]string{"limit": protocol.ErrAssetEntryLimit, "dup": protocol.ErrDuplicateAssetEntry,
			"empty": protocol.ErrEmptyAssetsArchive, "total": protocol.ErrAssetExpansionLimit, "entry": protocol.ErrAssetExpansionLimit}
	}
	if len(entries) == 0 {
		return nil, pluginFailure(codes["empty"], "Archive has no entries")
	}
	if len(entries) > maxEntries {
		return nil, pluginFailure(codes["limit"], fmt.Sprintf("Archive has more than %d entries", maxEntries))
	}
	files := map[string]*zip.File{}
	var total uint64
	for _, f := range entries {
		if !safeArchivePath(f.Name) {
			return nil, pluginFailure(protocol.ErrUnsafeArchivePath, "Archive entry path is unsafe: "+f.Name)
		}
		if _, dup := files[f.Name]; dup {
			return nil, pluginFailure(codes["dup"], "Archive entry is duplicated: "+f.Name)
		}
		if f.UncompressedSize64 > maxEntry {
			return nil, pluginFailure(codes["entry"], "Archive entry is too large: "+f.Name)
		}
		if !assets && f.CompressedSize64 > 0 && f.UncompressedSize64/f.CompressedSize64 > 250 {
			return nil, pluginFailure(protocol.ErrArchiveCompressionLimit, "Archive entry compression ratio is too high: "+f.Name)
		}
		total += f.UncompressedSize64
		if total > maxTotal {
			return nil, pluginFailure(codes["total"], "Archive expands beyond the size limit")
		}
		if !strings.HasSuffix(f.Name, "/") {
			files[f.Name] = f
		}
	}
	return files, nil
}

// safeArchivePath rejects absolute paths, backslashes, colons, control
// characters and "."/".." segments.
func safeArchivePath(n string) bool {
	if n == "" || strings.HasPrefix(n, "/") || strings.ContainsAny(n, "\\:") ||
		strings.ContainsFunc(n, func(r rune) bool { return r < 0x20 || r == 0x7F }) {
		return false
	}
	parts := strings.Split(strings.TrimSuffix(n, "/"), "/")
	for _, s := range parts {
		if s == "" || s == "." || s == ".." {
			return false
		}
	}
	return path.Clean(n) != "."
}

func readZipFile(f *zip.File) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", f.Name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, int64(f.UncompressedSize64)+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.Name, err)
	}
	return b, nil
}
