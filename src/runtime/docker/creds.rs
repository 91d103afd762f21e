//! Files into and out of containers through the engine's archive API (tar): the
//! chain's RPC certificate goes in before a container starts; a node's credential
//! files come out into the run directory, readable by the owner only.

use bollard::Docker;
use bollard::query_parameters::{
    DownloadFromContainerOptionsBuilder, UploadToContainerOptionsBuilder,
};
use futures::TryStreamExt;
use std::io::Read;
use std::path::Path;

/// A tar archive holding `files` (path relative to `/`, content, mode), with an entry
/// for each parent directory, so it unpacks at `/` even into an image without them.
pub fn pack(files: &[(&str, &[u8], u32)]) -> std::io::Result<Vec<u8>> {
    let mut builder = tar::Builder::new(Vec::new());
    let mut dirs: Vec<String> = Vec::new();
    for (path, _, _) in files {
        let mut parent = Path::new(path).parent();
        let mut chain = Vec::new();
        while let Some(p) = parent.filter(|p| !p.as_os_str().is_empty()) {
            chain.push(format!("{}/", p.display()));
            parent = p.parent();
        }
        for d in chain.into_iter().rev() {
            if !dirs.contains(&d) {
                dirs.push(d);
            }
        }
    }
    for d in &dirs {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(tar::EntryType::Directory);
        header.set_mode(0o755);
        header.set_size(0);
        builder.append_data(&mut header, d, std::io::empty())?;
    }
    for (path, content, mode) in files {
        let mut header = tar::Header::new_gnu();
        header.set_mode(*mode);
        header.set_size(content.len() as u64);
        builder.append_data(&mut header, path, *content)?;
    }
    builder.into_inner()
}

/// Unpacks `archive` (made by [`pack`]) at `/` of the container.
pub async fn upload(
    docker: &Docker,
    container: &str,
    archive: Vec<u8>,
) -> Result<(), bollard::errors::Error> {
    let options = UploadToContainerOptionsBuilder::default().path("/").build();
    docker
        .upload_to_container(container, Some(options), bollard::body_full(archive.into()))
        .await
}

/// The content of the file at `path` in the container. Errors while the file does not
/// exist yet (404 from the engine).
pub async fn download(
    docker: &Docker,
    container: &str,
    path: &str,
) -> Result<Vec<u8>, bollard::errors::Error> {
    let options = DownloadFromContainerOptionsBuilder::default()
        .path(path)
        .build();
    let archive = docker
        .download_from_container(container, Some(options))
        .try_fold(Vec::new(), |mut acc, chunk| async move {
            acc.extend_from_slice(&chunk);
            Ok(acc)
        })
        .await?;
    first_file(&archive).map_err(|e| bollard::errors::Error::IOError { err: e })
}

/// The content of the first regular file in a tar archive.
pub fn first_file(archive: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    copy_first_file(archive, &mut out)?;
    Ok(out)
}

/// Copies the first regular file of the tar archive `archive` into `out`, streamed.
pub fn copy_first_file(archive: impl Read, out: &mut impl std::io::Write) -> std::io::Result<()> {
    let mut tar = tar::Archive::new(archive);
    for entry in tar.entries()? {
        let mut entry = entry?;
        if entry.header().entry_type().is_file() {
            return std::io::copy(&mut entry, out).map(drop);
        }
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::NotFound,
        "the archive holds no file",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_adds_parent_directories_and_keeps_content_and_mode() {
        let archive = pack(&[
            ("data/btcd/rpc.cert", b"CERT", 0o644),
            ("data/x", b"", 0o600),
        ])
        .unwrap();
        let mut tar = tar::Archive::new(archive.as_slice());
        let entries: Vec<(String, u32, bool)> = tar
            .entries()
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let path = e.path().unwrap().display().to_string();
                (
                    path,
                    e.header().mode().unwrap(),
                    e.header().entry_type().is_dir(),
                )
            })
            .collect();
        assert_eq!(
            entries,
            vec![
                ("data/".into(), 0o755, true),
                ("data/btcd/".into(), 0o755, true),
                ("data/btcd/rpc.cert".into(), 0o644, false),
                ("data/x".into(), 0o600, false),
            ]
        );
        assert_eq!(first_file(&archive).unwrap(), b"CERT");
    }

    #[test]
    fn first_file_of_an_archive_without_files_is_an_error() {
        let archive = pack(&[]).unwrap();
        assert!(first_file(&archive).is_err());
    }
}
