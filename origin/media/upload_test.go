package media

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"mime/multipart"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"vitrine/origin/media/imaging"
	"vitrine/schema"
)

func TestFilenameFromDisposition(t *testing.T) {
	for _, tc := range []struct {
		values []string
		want   string
	}{
		{[]string{`attachment; filename="image.png"`}, "image.png"},
		{[]string{`attachment; filename=image.png`}, "image.png"},
		{[]string{`attachment;filename= my photo.jpg `}, "my photo.jpg"},
		{[]string{`inline; FILENAME="a.gif"`}, "a.gif"},
		{[]string{`attachment; filename*=UTF-8''caf%C3%A9.png`}, "café.png"},
		{[]string{`attachment; filename="fallback.png"; filename*=UTF-8''%E2%82%AC.png`}, "€.png"},
		{[]string{`attachment; filename*=iso-8859-1'en'%A3.png`}, "£.png"},
		{[]string{`attachment; filename*=UTF-8''%ZZ.png; filename=ok.png`}, "ok.png"},
		{[]string{`attachment; filename="../../etc/passwd"`}, "passwd"},
		{[]string{`attachment; filename="C:\Users\me\pic.png"`}, "pic.png"},
		{[]string{`attachment; filename="a.png"`, `attachment; filename="b.png"`}, "b.png"},
		{[]string{`attachment`}, ""},
		{[]string{`attachment; name=x`}, ""},
		{[]string{`attachment; filename=""`}, ""},
		{[]string{`attachment; filename=`}, ""},
		{nil, ""},
	} {
		if got := FilenameFromDisposition(tc.values); got != tc.want {
			t.Errorf("FilenameFromDisposition(%q) = %q, want %q", tc.values, got, tc.want)
		}
	}
}

func TestStem(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Holiday Photo.png", "Holiday-Photo"},
		{"café.jpg", "cafe"},
		{"my.photo.final.jpeg", "my.photo.final"},
		{"../../x.png", "x"},
		{"...png", "unnamed-file"},
		{"日本.png", "unnamed-file"},
		{"a  --  b.png", "a-b"},
		{".hidden", "hidden"},
		{"noext", "noext"},
		{strings.Repeat("a", 300) + ".png", strings.Repeat("a", 80)},
		{"<script>.png", "script"},
	} {
		got := Stem(tc.in)
		if got != tc.want {
			t.Errorf("Stem(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestStoredNames(t *testing.T) {
	for _, tc := range []struct{ file, stem, edited string }{
		{"2026/11/photo-9f86d081884c.jpg", "photo", "photo-edited"},
		{"2026/11/photo-9f86d081884c-2.jpg", "photo", "photo-edited"},
		{"2026/11/photo-9f86d081884c-scaled.jpg", "photo", "photo-edited"},
		{"2026/11/photo-edited-9f86d081884c.jpg", "photo-edited", "photo-edited"},
		{"2026/11/photo-edited-2-9f86d081884c.jpg", "photo-edited-2", "photo-edited"},
		{"2026/11/odd.jpg", "odd", "odd-edited"},
	} {
		if got := stemOfStored(tc.file); got != tc.stem {
			t.Errorf("stemOfStored(%q) = %q, want %q", tc.file, got, tc.stem)
		}
		if got := editedStem(strings.TrimSuffix(tc.file, ".jpg")); got != tc.edited {
			t.Errorf("editedStem(%q) = %q, want %q", tc.file, got, tc.edited)
		}
	}
	nm := naming{dir: "2026/11", stem: "photo", hash: "9f86d081884c", ext: "jpg"}
	if nm.base(1) != "2026/11/photo-9f86d081884c" || nm.base(3) != "2026/11/photo-9f86d081884c-3" {
		t.Errorf("bases %s %s", nm.base(1), nm.base(3))
	}
}

func TestMatchesFile(t *testing.T) {
	a := &schema.Attachment{File: "2026/11/p-9f86d081884c-scaled.jpg", Original: &schema.AttachmentSize{File: "2026/11/p-9f86d081884c.jpg"},
		Sizes: map[string]schema.AttachmentSize{"thumbnail": {File: "2026/11/p-9f86d081884c-150x150.jpg"}}}
	for _, tc := range []struct {
		src  string
		want bool
	}{
		{"https://shop.example/cms-content/uploads/2026/11/p-9f86d081884c-scaled.jpg", true},
		{"https://shop.example/cms-content/uploads/2026/11/p-9f86d081884c.jpg?ver=2", true},
		{"/cms-content/uploads/2026/11/p-9f86d081884c-150x150.jpg", true},
		{"https://shop.example/cms-content/uploads/2026/11/other.jpg", false},
		{"https://shop.example/2026/11/p-9f86d081884c.jpg", false},
		{"%zz", false},
	} {
		if got := matchesFile(tc.src, a); got != tc.want {
			t.Errorf("matchesFile(%q) = %v", tc.src, got)
		}
	}
}

func formBody(t testing.TB, parts [][3]string) ([]byte, string) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for _, p := range parts { // name, filename, content
		h := textproto.MIMEHeader{}
		d := `form-data; name="` + p[0] + `"`
		if p[1] != "" {
			d += `; filename="` + p[1] + `"`
		}
		h.Set("Content-Disposition", d)
		pw, err := w.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		pw.Write([]byte(p[2]))
	}
	w.Close()
	return b.Bytes(), w.Boundary()
}

func TestReadForm(t *testing.T) {
	body, boundary := formBody(t, [][3]string{{"title", "", "T"}, {"file", "dir/a b.png", "DATA"}, {"file", "second.png", "OTHER"}, {"alt_text", "", "x"}})
	up, err := readForm(body, boundary, 100)
	if err != nil {
		t.Fatal(err)
	}
	if string(up.data) != "DATA" || up.filename != "a b.png" || up.fields["title"] != "T" || up.fields["alt_text"] != "x" || !up.multipart {
		t.Errorf("form %+v", up)
	}
	for _, tc := range []struct {
		name  string
		parts [][3]string
		max   int64
		code  string
	}{
		{"no file", [][3]string{{"title", "", "T"}}, 100, "rest_upload_no_data"},
		{"file without a name", [][3]string{{"file", "", "DATA"}}, 100, "rest_upload_no_data"},
		{"empty file", [][3]string{{"file", "a.png", ""}}, 100, "rest_upload_no_data"},
		{"too big", [][3]string{{"file", "a.png", "0123456789"}}, 9, "rest_upload_file_too_big"},
		{"field too long", [][3]string{{"title", "", strings.Repeat("x", maxFormFieldSize+1)}, {"file", "a.png", "D"}}, 100, "rest_invalid_param"},
	} {
		body, boundary := formBody(t, tc.parts)
		_, err := readForm(body, boundary, tc.max)
		if e := schema.AsError(err); err == nil || e.CMSCode != tc.code {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}
	if _, err := readForm([]byte("garbage"), "b", 100); schema.AsError(err).CMSCode != "rest_upload_no_data" {
		t.Errorf("garbage form: %v", err)
	}
}

func TestReadRaw(t *testing.T) {
	disp := []string{`attachment; filename="a.png"`}
	for _, tc := range []struct {
		name   string
		body   string
		ctype  string
		disp   []string
		md5    string
		code   string
		status int
	}{
		{"ok", "DATA", "image/png", disp, "", "", 0},
		{"md5 hex", "DATA", "image/png", disp, "E44F9E348E41CB272EFA87387728571B", "", 0},
		{"md5 base64", "DATA", "image/png", disp, "5E+eNI5Byycu+oc4dyhXGw==", "", 0},
		{"md5 wrong", "DATA", "image/png", disp, "00", "rest_upload_hash_mismatch", 412},
		{"no data", "", "image/png", disp, "", "rest_upload_no_data", 0},
		{"no type", "DATA", " ", disp, "", "rest_upload_no_content_type", 0},
		{"no disposition", "DATA", "image/png", nil, "", "rest_upload_no_content_disposition", 0},
		{"bad disposition", "DATA", "image/png", []string{"attachment"}, "", "rest_upload_invalid_disposition", 0},
		{"too big", "DATA!", "image/png", disp, "", "rest_upload_file_too_big", 0},
	} {
		up, err := readRaw([]byte(tc.body), tc.ctype, tc.disp, tc.md5, 4)
		if tc.code == "" {
			if err != nil || string(up.data) != tc.body || up.filename != "a.png" {
				t.Errorf("%s: %+v %v", tc.name, up, err)
			}
			continue
		}
		e := schema.AsError(err)
		if err == nil || e.CMSCode != tc.code || (tc.status != 0 && e.Status != tc.status) {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}
	if got := tooBig(32 << 20).Message; got != "This file is too big. Files must be less than 32,768 KB in size." {
		t.Errorf("too big message %q", got)
	}
}

func TestParseModifiers(t *testing.T) {
	for _, tc := range []struct {
		typ, args string
		ok        bool
	}{
		{"flip", `{"flip":{"horizontal":true,"vertical":false}}`, true},
		{"flip", `{"flip":{"horizontal":true}}`, false},
		{"rotate", `{"angle":45.5}`, true},
		{"rotate", `{"angle":"90"}`, false},
		{"crop", `{"left":0,"top":0,"width":50,"height":50}`, true},
		{"crop", `{"left":0,"top":0,"width":50}`, false},
		{"crop", `{"left":0,"top":0,"width":50,"height":50,"x":1}`, false},
		{"shear", `{}`, false},
	} {
		typ := tc.typ
		_, err := parseModifier(editModifier{Type: &typ, Args: []byte(tc.args)})
		if (err == nil) != tc.ok {
			t.Errorf("%s %s: %v", tc.typ, tc.args, err)
		}
	}
	if _, err := parseModifier(editModifier{}); err == nil {
		t.Error("an empty modifier parsed")
	}
}

// An upload whose sub-sizes run out of time keeps what was made and says it is incomplete; the
// original and its scaled copy are always made.
func TestPrepareDeadline(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 400, 300))
	for i := range img.Pix {
		img.Pix[i] = uint8(i)
	}
	img.Set(0, 0, color.RGBA{1, 2, 3, 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	s := New(nil, nil, Posts{}, nil, Config{})
	for _, tc := range []struct {
		deadline time.Time
		complete bool
		sizes    int
	}{
		{time.Now().Add(time.Minute), true, 2}, // medium 300x225, thumbnail 150x150
		{time.Now().Add(-time.Second), false, 0},
	} {
		st, err := s.prepare(t.Context(), b.Bytes(), imaging.PNG, true, tc.deadline)
		if err != nil {
			t.Fatal(err)
		}
		if st.complete != tc.complete || len(st.sizes) != tc.sizes || st.origW != 400 || len(st.orig) == 0 {
			t.Errorf("deadline %v: complete %v, %d sizes", tc.deadline, st.complete, len(st.sizes))
		}
	}
	// Without generate_sub_sizes nothing is made and nothing is missing from the answer's view.
	st, err := s.prepare(t.Context(), b.Bytes(), imaging.PNG, false, time.Now().Add(time.Minute))
	if err != nil || !st.complete || len(st.sizes) != 0 {
		t.Errorf("no sub-sizes: %+v %v", st, err)
	}
}

// Decoders of untrusted input never panic, and answer only with schema errors.
func FuzzFilenameFromDisposition(f *testing.F) {
	for _, s := range []string{`attachment; filename="a.png"`, `attachment; filename*=UTF-8''%E2%82%AC.png`, `x;filename*='''`, ";=;=", `a; filename*=iso-8859-1''%FF`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		name := FilenameFromDisposition([]string{v})
		if strings.ContainsAny(name, `/\`) {
			t.Errorf("%q gave a name with a directory: %q", v, name)
		}
		st := Stem(name)
		if st == "" || len(st) > maxStemLen || strings.Trim(st, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != "" {
			t.Errorf("Stem(%q) = %q", name, st)
		}
	})
}

func FuzzReadForm(f *testing.F) {
	body, boundary := formBody(f, [][3]string{{"title", "", "T"}, {"file", "a.png", "DATA"}})
	f.Add(body, boundary)
	f.Add([]byte("--b\r\nContent-Disposition: form-data; name=file; filename=x\r\n\r\nD\r\n--b--\r\n"), "b")
	f.Add([]byte("--b\r\n\r\n"), "b")
	f.Fuzz(func(t *testing.T, body []byte, boundary string) {
		up, err := readForm(body, boundary, 1<<10)
		if err != nil {
			if schema.ErrorCode(err) != schema.CodeInvalid {
				t.Errorf("error %v is not a 400", err)
			}
			return
		}
		if len(up.data) == 0 || len(up.data) > 1<<10 {
			t.Errorf("file of %d bytes", len(up.data))
		}
	})
}

func FuzzParseModifier(f *testing.F) {
	f.Add("flip", `{"flip":{"horizontal":true,"vertical":false}}`)
	f.Add("crop", `{"left":0,"top":0,"width":50,"height":50}`)
	f.Add("rotate", `{"angle":1e309}`)
	f.Fuzz(func(t *testing.T, typ, args string) {
		parseModifier(editModifier{Type: &typ, Args: []byte(args)})
	})
}

// Whatever bytes are uploaded, processing them never panics and a refusal is never a 500: the
// answer is a 4xx (or a 503 when the memory budget is full).
func FuzzPrepare(f *testing.F) {
	var b bytes.Buffer
	png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 40, 30)))
	full := b.Bytes()
	f.Add(full)
	f.Add(full[:len(full)/2])
	f.Add([]byte("GIF89a\x10\x00\x10\x00\x80\x00\x00"))
	f.Add([]byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00"))
	f.Add([]byte("RIFF\x00\x00\x00\x00WEBPVP8 "))
	// A PNG header claiming 100000×100000 pixels.
	bomb := append([]byte{}, full[:33]...)
	copy(bomb[16:24], []byte{0, 1, 0x86, 0xa0, 0, 1, 0x86, 0xa0})
	f.Add(bomb)
	f.Add([]byte("MZ\x90\x00"))
	s := New(nil, nil, Posts{}, nil, Config{MaxPixels: 1 << 20})
	f.Fuzz(func(t *testing.T, data []byte) {
		mime, err := imaging.Sniff(data)
		if err == nil {
			_, err = s.prepare(t.Context(), data, mime, true, time.Now().Add(time.Second))
		}
		if err == nil {
			return
		}
		e := schema.AsError(uploadError(err, false, 1<<20))
		if e.Code == schema.CodeInternal || (e.Status >= 500 || e.Code == schema.CodeUnavailable) && imaging.KindOf(err) != imaging.KindBusy {
			t.Errorf("%d bytes: %v answered as %+v", len(data), err, e)
		}
	})
}
