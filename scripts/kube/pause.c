/* The pod sandbox process of lnbench-kube's pods (image lnbench/pause:1, built by
 * scripts/kube-cluster.sh): holds the pod's namespaces open and does nothing else.
 * As PID 1 of the pod it reaps the children that get reparented to it, and it exits
 * cleanly on SIGINT or SIGTERM. Built with: gcc -static -Os. */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_stop(int sig) { (void)sig; _exit(0); }

static void on_child(int sig) {
  (void)sig;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(void) {
  struct sigaction sa = {0};
  /* Each handler runs with every other signal blocked. */
  sigfillset(&sa.sa_mask);
  sa.sa_handler = on_stop;
  if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL)) return 1;
  sa.sa_handler = on_child;
  sa.sa_flags = SA_NOCLDSTOP | SA_RESTART;
  if (sigaction(SIGCHLD, &sa, NULL)) return 1;
  /* Start with no signal blocked, whatever mask the runtime handed down. */
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  for (;;) pause();
}
