#include "brokerd/common/bytes.h"

#include <unistd.h>

namespace brokerd {

FileHandle::~FileHandle() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace brokerd
