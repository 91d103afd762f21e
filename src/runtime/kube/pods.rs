//! The pods of a run, one at a time: each one's Service and Secret, its Pod, the
//! forward of its RPC port, and commands run in its containers (credential reads, the
//! chain's version, a restart's stop).

use super::{EXEC_TIMEOUT, KubeRuntime, forward, kube_err, objects, watch};
use crate::chain::ConfigFile;
use crate::runtime::{NodeEndpoint, RuntimeError};
use k8s_openapi::api::core::v1::{Pod, Secret, Service};
use kube::Api;
use kube::api::{AttachParams, PostParams};
use objects::FILES_CONTAINER;
use std::time::Duration;
use tokio::io::AsyncReadExt;

impl KubeRuntime {
    /// Creates the ClusterIP Service of `name` and returns its address.
    pub(super) async fn service(&self, name: &str, ports: &[u16]) -> Result<String, RuntimeError> {
        let created = self
            .api::<Service>()
            .create(
                &PostParams::default(),
                &objects::service(&self.run_id, name, ports),
            )
            .await
            .map_err(kube_err(format!("creating the service of {name}")))?;
        created
            .spec
            .and_then(|s| s.cluster_ip)
            .filter(|ip| !ip.is_empty() && ip != "None")
            .ok_or_else(|| RuntimeError::Unsupported {
                what: format!("the service of {name}"),
                why: "the cluster gave it no cluster IP".into(),
                hint: "check the API server's --service-cluster-ip-range".into(),
            })
    }

    /// Creates the Secret with `files` and the Pod of `name`, and follows its log.
    pub(super) async fn pod(
        &mut self,
        name: &str,
        image: &str,
        args: &[String],
        ports: &[u16],
        files: &[ConfigFile],
    ) -> Result<(), RuntimeError> {
        self.api::<Secret>()
            .create(
                &PostParams::default(),
                &objects::secret(&self.run_id, name, files),
            )
            .await
            .map_err(kube_err(format!("creating the config secret of {name}")))?;
        let paths: Vec<String> = files.iter().map(|f| f.path.to_string()).collect();
        let pin = (self.settings.pin.iter())
            .find(|(n, _)| n == name)
            .map(|(_, h)| h.as_str());
        let envelope = (self.envelopes.iter())
            .find(|(n, _)| n == name)
            .map(|(_, e)| e);
        let pod = objects::pod(&objects::PodSpec {
            run_id: &self.run_id,
            name,
            image,
            pull: self.pull,
            args,
            ports,
            files: &paths,
            spread: self.settings.spread,
            pin,
            envelope,
        });
        self.api::<Pod>()
            .create(&PostParams::default(), &pod)
            .await
            .map_err(kube_err(format!("creating the pod of {name} ({image})")))?;
        self.pods.push(name.to_string());
        self.loggers.push(tokio::spawn(watch::follow_log(
            self.api(),
            name.to_string(),
            self.log_path(name),
        )));
        Ok(())
    }

    /// A local address forwarded to `port` of pod `name`.
    pub(super) async fn forward(&mut self, name: &str, port: u16) -> Result<String, RuntimeError> {
        let (addr, task) = forward::forward(self.api(), name.to_string(), port)
            .await
            .map_err(KubeRuntime::io_err(&self.run_dir))?;
        self.forwards.push(task);
        Ok(addr)
    }

    /// Runs `cmd` in `container` of pod `name`; its stdout when it succeeded.
    pub(super) async fn exec(&self, name: &str, container: &str, cmd: &[&str]) -> Option<Vec<u8>> {
        (self.exec_within(name, container, cmd, EXEC_TIMEOUT).await).ok()
    }

    /// [`Self::exec`], given `limit` to finish; on failure, what the API said and what
    /// the command printed.
    pub(super) async fn exec_within(
        &self,
        name: &str,
        container: &str,
        cmd: &[&str],
        limit: Duration,
    ) -> Result<Vec<u8>, String> {
        let cmd: Vec<String> = cmd.iter().map(|c| c.to_string()).collect();
        exec_in(self.api(), name.into(), container.into(), cmd, limit).await
    }

    /// Copies a node's credential files out once all exist, through the reader
    /// container, into its private directory, but those in `written` (config files the
    /// tool wrote itself). Err (which one) while one is missing.
    pub(super) async fn copy_credentials(
        &self,
        ep: &NodeEndpoint,
        written: &[&str],
    ) -> Result<(), String> {
        let driver = crate::node::driver(ep.implementation);
        for (inside, outside) in driver.credential_files().iter().zip(ep.credentials.files()) {
            if written.contains(inside) {
                continue;
            }
            let path = format!("{}/{inside}", objects::DATA);
            let content = (self
                .exec(&ep.name, FILES_CONTAINER, &["/bin/cat", &path])
                .await)
                .filter(|c| !c.is_empty())
                .ok_or_else(|| format!("{inside} not readable in its pod yet"))?;
            crate::runtime::shared::write_private(outside, &content)
                .map_err(|e| format!("writing {}: {e}", outside.display()))?;
        }
        Ok(())
    }
}

/// Runs `cmd` in `container` of pod `name` within `limit`; its stdout when it
/// succeeded, else what the API said and what the command printed. Owns what it
/// uses, so that it can run in a task of its own.
pub(super) async fn exec_in(
    pods: Api<Pod>,
    name: String,
    container: String,
    cmd: Vec<String>,
    limit: Duration,
) -> Result<Vec<u8>, String> {
    let run = async {
        let params = AttachParams::default().container(container).stderr(false);
        let mut process = (pods.exec(&name, cmd, &params).await)
            .map_err(|e| format!("exec in pod {name}: {e}"))?;
        let mut stdout = process.stdout().ok_or("exec without stdout")?;
        let status = process.take_status();
        let mut out = Vec::new();
        (stdout.read_to_end(&mut out).await).map_err(|e| format!("reading its output: {e}"))?;
        let failed = match status {
            Some(status) => (status.await)
                .filter(|s| s.status.as_deref() != Some("Success"))
                .map(|s| s.message.unwrap_or_else(|| "failed".into())),
            None => None,
        };
        let _ = process.join().await;
        match failed {
            None => Ok(out),
            Some(message) => Err(format!(
                "{message}: {}",
                String::from_utf8_lossy(&out).trim()
            )),
        }
    };
    (tokio::time::timeout(limit, run).await)
        .unwrap_or_else(|_| Err(format!("no end within {} s", limit.as_secs())))
}

/// Writes the credential files that are config files of the node (Eclair's API
/// password, ldk-server's API key) into its private directory from `files`: they are
/// mounted into the node container only, so the reader container cannot see them.
/// Returns their names, for [`KubeRuntime::copy_credentials`] to leave alone.
pub(super) fn write_config_credentials(
    driver: &dyn crate::node::driver::NodeDriver,
    files: &[ConfigFile],
    credentials: &crate::node::Credentials,
) -> Result<Vec<&'static str>, RuntimeError> {
    let mut written = Vec::new();
    for (inside, outside) in driver.credential_files().iter().zip(credentials.files()) {
        let Some(file) = files.iter().find(|f| f.path == *inside) else {
            continue;
        };
        crate::runtime::shared::write_private(outside, file.content.as_bytes()).map_err(
            |source| RuntimeError::Io {
                path: outside.to_path_buf(),
                source,
            },
        )?;
        written.push(*inside);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::Implementation;

    /// Eclair's API password and ldk-server's key are config files the reader
    /// container cannot see: they are written from the config; LND's are not.
    #[test]
    fn credentials_that_are_config_files_are_written_from_the_config() {
        let access = crate::chain::ChainAccess {
            kind: crate::scenario::ChainKind::Bitcoind,
            rpc_addr: "10.0.0.1:18443".into(),
            rpc_user: "u".into(),
            rpc_pass: "secret".into(),
            rpc_cert: None,
            zmq_block: None,
            zmq_tx: None,
            cli: None,
        };
        for (implementation, count) in [
            (Implementation::Eclair, 1),
            (Implementation::Ldk, 1),
            (Implementation::Lnd, 0),
        ] {
            let tmp = tempfile::tempdir().unwrap();
            let driver = crate::node::driver(implementation);
            let (_, files) =
                crate::runtime::shared::container::node_command(implementation, "bob", &access);
            let creds = driver.credentials(&|f| tmp.path().join(f));
            let written = write_config_credentials(driver, &files, &creds).unwrap();
            assert_eq!(written.len(), count, "{implementation:?}: {written:?}");
            for name in written {
                let config = files.iter().find(|f| f.path == name).unwrap();
                let here = std::fs::read_to_string(tmp.path().join(name)).unwrap();
                assert_eq!(here, config.content, "{implementation:?}");
                assert!(!here.is_empty());
            }
        }
    }
}
