package vendormock

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func setImageEnv(t *testing.T, kv map[string]string) {
	t.Helper()
	for _, k := range []string{EnvImageRabbitMQ, EnvImageNginx, EnvImageWireMock, EnvImageToxiproxy, EnvImageWorker, EnvPostgresImage, EnvImagesKind, EnvImageWorkerNode, EnvImageWorkerJava, EnvImageWorkerPython, EnvImageStreamReset} {
		t.Setenv(k, kv[k])
	}
}

func TestImagesFromEnv(t *testing.T) {
	setImageEnv(t, map[string]string{EnvImageRabbitMQ: "r:1", EnvImageToxiproxy: "t:1", EnvImagesKind: "offline"})
	_, err := ImagesFromEnv()
	if !errors.Is(err, ErrImagesMissing) {
		t.Fatalf("err = %v, want ErrImagesMissing", err)
	}
	for _, want := range []string{EnvImageNginx, EnvImageWireMock, "./run.sh"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want it to name %s", err, want)
		}
	}
	if strings.Contains(err.Error(), EnvImageRabbitMQ) || strings.Contains(err.Error(), EnvImageWorker) {
		t.Errorf("err = %v names a variable that is set or optional", err)
	}

	setImageEnv(t, map[string]string{EnvImageRabbitMQ: "r:1", EnvImageNginx: "n:1", EnvImageWireMock: "w:1", EnvImageToxiproxy: "t:1", EnvImagesKind: "offline",
		EnvImageWorkerNode: "node:1"})
	im, err := ImagesFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	want := Images{Kind: "offline", RabbitMQ: "r:1", Nginx: "n:1", WireMock: "w:1", Toxiproxy: "t:1", References: map[string]string{EnvImageWorkerNode: "node:1"}}
	if !reflect.DeepEqual(im, want) {
		t.Errorf("ImagesFromEnv = %+v, want %+v", im, want)
	}
	// The reference worker's image reaches WorkerImage through Var, the
	// lookup a command passes; an unset one is still refused.
	if sel, err := WorkerImage("node-fetch", im.Var); err != nil || sel.Image != "node:1" {
		t.Errorf("WorkerImage(node-fetch, Var) = %+v, %v; want image node:1", sel, err)
	}
	if _, err := WorkerImage("java-shared", im.Var); !errors.Is(err, ErrImagesMissing) {
		t.Errorf("WorkerImage(java-shared, Var) = %v; want ErrImagesMissing", err)
	}
	if im.Var(EnvImageNginx) != "n:1" || im.Var(EnvImagesKind) != "offline" || im.Var("LAB_IMAGE_NONE") != "" {
		t.Errorf("Var: nginx %q kind %q none %q", im.Var(EnvImageNginx), im.Var(EnvImagesKind), im.Var("LAB_IMAGE_NONE"))
	}
}

func TestReadImagesEnv(t *testing.T) {
	path := filepath.Join(t.TempDir(), "images.env")
	content := "# written by ensure-images.sh\nLAB_IMAGES_KIND=offline\nexport LAB_IMAGE_RABBITMQ=\"r:file\"\nLAB_IMAGE_NGINX=n:file\nLAB_IMAGE_WIREMOCK='w:file'\nLAB_IMAGE_TOXIPROXY=t:file\nLAB_IMAGE_WORKER=\n"
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	setImageEnv(t, map[string]string{EnvImageNginx: "n:env"})
	im, err := ReadImagesEnv(path)
	if err != nil {
		t.Fatal(err)
	}
	want := Images{Kind: "offline", RabbitMQ: "r:file", Nginx: "n:env", WireMock: "w:file", Toxiproxy: "t:file"}
	if !reflect.DeepEqual(im, want) {
		t.Errorf("ReadImagesEnv = %+v, want %+v (environment wins)", im, want)
	}
	_, err = ReadImagesEnv(filepath.Join(t.TempDir(), "none.env"))
	if !errors.Is(err, ErrImagesMissing) {
		t.Errorf("missing file: err %v, want ErrImagesMissing", err)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: err %v, want it to wrap the open error (fs.ErrNotExist)", err)
	}
}

// TestSessionLabelFromOptions: the session label comes from
// Options.Session, never from the process environment (the command reads
// LAB_SESSION at its edge).
func TestSessionLabelFromOptions(t *testing.T) {
	t.Setenv(EnvSession, "from-the-environment")
	if l := (&Stack{RunID: "r1"}).labels(); l[LabelRun] != "r1" || len(l) != 1 {
		t.Errorf("labels without Options.Session = %v; want only %s", l, LabelRun)
	}
	if l := (&Stack{RunID: "r1", session: "mine"}).labels(); l[LabelSession] != "mine" {
		t.Errorf("labels = %v; want %s=mine", l, LabelSession)
	}
}
