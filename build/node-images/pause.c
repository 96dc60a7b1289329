/* The pause process of the real nodes' pod sandboxes (ksview spaces up --real-nodes), as
 * Kubernetes' build/pause/linux/pause.c: hold the pod's namespaces, reap zombies, exit on
 * TERM/INT. Built static (gcc -static) into an image FROM scratch: no registry here. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void onstop(int sig) { (void)sig; _exit(0); }
static void onchld(int sig) { (void)sig; while (waitpid(-1, NULL, WNOHANG) > 0) {} }

int main(void) {
  struct sigaction stop = { .sa_handler = onstop }, chld = { .sa_handler = onchld, .sa_flags = SA_NOCLDSTOP };
  if (sigaction(SIGINT, &stop, NULL) < 0 || sigaction(SIGTERM, &stop, NULL) < 0 || sigaction(SIGCHLD, &chld, NULL) < 0) return 1;
  for (;;) pause();
}
