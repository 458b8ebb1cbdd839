package vendormock

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"strings"

	"github.com/containerd/errdefs"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
)

// ErrImagesMissing is returned (wrapped) when image names are not set or an
// image is not present in the local Docker engine. No registry is reachable
// on the lab's machines, so the fix is always to build them: ./run.sh.
var ErrImagesMissing = errors.New("lab images missing")

// Environment variables naming the images (written to .lab/images.env by
// vendormock/images/ensure-images.sh).
const (
	EnvImageRabbitMQ  = "LAB_IMAGE_RABBITMQ"
	EnvImageNginx     = "LAB_IMAGE_NGINX"
	EnvImageWireMock  = "LAB_IMAGE_WIREMOCK"
	EnvImageToxiproxy = "LAB_IMAGE_TOXIPROXY"
	EnvImageWorker    = "LAB_IMAGE_WORKER"
	// EnvImageStreamReset names the stream-reset fault proxy's image
	// (vendormock/streamreset; optional, StartStreamReset needs it).
	EnvImageStreamReset = "LAB_IMAGE_STREAMRESET"
	EnvImagesKind       = "LAB_IMAGES_KIND"
)

// DefaultImagesEnvFile is where vendormock/images/ensure-images.sh writes
// the image names, relative to the repository root.
const DefaultImagesEnvFile = ".lab/images.env"

// ImagesFromEnv reads Images from the process environment: for a
// command's or a test's edge only (no code of vendormock calls it). The four service images
// are required; Worker (needed only by StartWorker) and Kind are optional.
// The error wraps ErrImagesMissing, names every missing variable and says
// to run ./run.sh (which builds them).
func ImagesFromEnv() (Images, error) {
	return ImagesFrom(os.Getenv)
}

// ReadImagesEnv reads Images from a KEY=VALUE file such as
// DefaultImagesEnvFile (relative paths are tried from the working directory,
// then the repository root); a variable set in the environment wins over
// the file. Lines starting with # and "export " prefixes are allowed; values
// may be quoted. Errors as ImagesFromEnv, or the file is unreadable.
func ReadImagesEnv(path string) (Images, error) {
	abs, err := resolveRepoPath(path)
	if err != nil {
		return Images{}, fmt.Errorf("%w: %w: run ./run.sh to build the images", ErrImagesMissing, err)
	}
	f, err := os.Open(abs)
	if err != nil {
		return Images{}, fmt.Errorf("%w: %w: run ./run.sh to build the images", ErrImagesMissing, err)
	}
	defer f.Close()
	vals := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if !ok {
			continue
		}
		vals[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), `"'`)
	}
	if err := sc.Err(); err != nil {
		return Images{}, fmt.Errorf("read %s: %w", abs, err)
	}
	return ImagesFrom(func(k string) string {
		if v := os.Getenv(k); v != "" {
			return v
		}
		return vals[k]
	})
}

// ImagesFrom builds Images from a lookup of the LAB_IMAGE_* variables
// (os.Getenv at a command's edge, a map in tests): the one place that
// reads them. Errors as Validate.
func ImagesFrom(get func(string) string) (Images, error) {
	im := Images{
		Kind:        get(EnvImagesKind),
		RabbitMQ:    get(EnvImageRabbitMQ),
		Nginx:       get(EnvImageNginx),
		WireMock:    get(EnvImageWireMock),
		Toxiproxy:   get(EnvImageToxiproxy),
		Worker:      get(EnvImageWorker),
		Postgres:    get(EnvPostgresImage),
		StreamReset: get(EnvImageStreamReset),
	}
	for _, ref := range referenceWorkers {
		if v := get(ref.imageEnv); v != "" {
			if im.References == nil {
				im.References = map[string]string{}
			}
			im.References[ref.imageEnv] = v
		}
	}
	return im, im.Validate()
}

// Validate checks that the four service images are named; Worker and
// Postgres are optional here. The error wraps ErrImagesMissing, names
// every missing variable and says to run ./run.sh (which builds them).
func (im Images) Validate() error {
	var missing []string
	for _, kv := range [][2]string{
		{EnvImageRabbitMQ, im.RabbitMQ}, {EnvImageNginx, im.Nginx},
		{EnvImageWireMock, im.WireMock}, {EnvImageToxiproxy, im.Toxiproxy},
	} {
		if kv[1] == "" {
			missing = append(missing, kv[0])
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s not set: run ./run.sh (it builds the images and writes %s)",
			ErrImagesMissing, strings.Join(missing, ", "), DefaultImagesEnvFile)
	}
	return nil
}

// CheckImages verifies that every named image (empty names are skipped)
// exists in the local Docker engine, so testcontainers-go uses it as is and
// never tries a pull (it pulls only when the tag is absent). The error wraps
// ErrImagesMissing and names every absent image with its variable.
func CheckImages(ctx context.Context, im Images) error {
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return fmt.Errorf("check images: connect to docker: %w", err)
	}
	defer cli.Close()
	var missing []string
	for _, kv := range [][2]string{
		{EnvImageRabbitMQ, im.RabbitMQ}, {EnvImageNginx, im.Nginx},
		{EnvImageWireMock, im.WireMock}, {EnvImageToxiproxy, im.Toxiproxy},
		{EnvImageWorker, im.Worker}, {EnvImageStreamReset, im.StreamReset},
	} {
		if kv[1] == "" {
			continue
		}
		if _, err := cli.ImageInspect(ctx, kv[1]); err != nil {
			if !errdefs.IsNotFound(err) {
				return fmt.Errorf("check images: inspect %s: %w", kv[1], err)
			}
			missing = append(missing, fmt.Sprintf("%s (%s)", kv[1], kv[0]))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: not in the local Docker engine: %s: run ./run.sh to build them",
			ErrImagesMissing, strings.Join(missing, ", "))
	}
	return nil
}

// EnsureTestcontainersEnv applies the lab's testcontainers settings unless
// the user set them (docs/environment.md#testcontainers-settings): the
// Docker host is 127.0.0.1 (testcontainers' guess, the default gateway,
// sends traffic off the machine) and Ryuk is off (its image needs a
// registry); the lab removes its containers and networks itself.
// testcontainers reads these once, at its first use in the process, so a
// command or a test main calls this at its edge before anything starts a
// container; Start, StartBrokers and CheckImages do not.
func EnsureTestcontainersEnv() {
	for k, v := range map[string]string{
		"TESTCONTAINERS_HOST_OVERRIDE": "127.0.0.1",
		"TESTCONTAINERS_RYUK_DISABLED": "true",
	} {
		if _, ok := os.LookupEnv(k); !ok {
			os.Setenv(k, v)
		}
	}
}

// LogTestcontainersTo sends testcontainers-go's own log lines (container
// started, stopped, terminated: emoji and container ids) to w instead of
// standard error, where they fell between the lab's progress lines. A
// command calls it at its edge, like EnsureTestcontainersEnv; errors still
// come back as Go errors and are reported by the lab.
func LogTestcontainersTo(w io.Writer) {
	tclog.SetDefault(log.New(w, "", log.LstdFlags))
}
