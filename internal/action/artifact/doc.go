// Package artifact owns uploading a directory as a GitHub Actions workflow
// artifact through the results service (artifact protocol v4): it zips the
// directory, creates the artifact over twirp, uploads the zip block by block
// to the signed blob URL, in order, and finalizes it with its size and
// SHA-256.
//
// It must never follow a symlink (they are left out of the zip), never
// zip a path that Windows reads as another (export.WindowsNames), never send
// the runtime token anywhere but the results service, and never put the
// token or the upload URL's signature in an error. It reads no environment:
// the caller passes the runner's values in a Config.
package artifact
