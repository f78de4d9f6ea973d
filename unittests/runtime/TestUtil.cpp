//===- TestUtil.cpp - Helpers shared by the runtime tests -----------------===//

#include "TestUtil.h"

#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace grove::test {

std::vector<float> ManagedPtr::values() const {
  const DLTensor &t = p->dl_tensor;
  size_t n = 1;
  for (int i = 0; i < t.ndim; ++i)
    n *= static_cast<size_t>(t.shape[i]);
  return std::vector<float>(f32data(), f32data() + n);
}

::testing::AssertionResult failsWith(grove_status status, grove_status expected,
                                     const std::string &needle) {
  std::string message = grove_last_error();
  if (status != expected)
    return ::testing::AssertionFailure()
           << "status " << grove_status_string(status) << ", expected "
           << grove_status_string(expected) << " (message: " << message << ")";
  if (message.empty())
    return ::testing::AssertionFailure() << "empty error message";
  if (!needle.empty() && message.find(needle) == std::string::npos)
    return ::testing::AssertionFailure()
           << "message '" << message << "' does not mention '" << needle << "'";
  return ::testing::AssertionSuccess() << message;
}

std::string safetensorsImage(const std::string &header,
                             const std::string &data) {
  std::string out;
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  return out + header + data;
}

std::string floatBytes(const std::vector<float> &v) {
  std::string out(v.size() * sizeof(float), '\0');
  if (!v.empty())
    std::memcpy(out.data(), v.data(), out.size());
  return out;
}

TempDir::TempDir() {
  std::string tmpl = ::testing::TempDir() + "grove-rt-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data()))
    ADD_FAILURE() << "mkdtemp failed";
  dir = buf.data();
}

TempDir::~TempDir() {
  for (const std::string &name : list()) {
    std::string p = file(name);
    struct stat st;
    if (stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
      rmdir(p.c_str());
    else
      unlink(p.c_str());
  }
  rmdir(dir.c_str());
}

void TempDir::write(const std::string &name, const std::string &bytes) const {
  std::ofstream out(file(name), std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::vector<std::string> TempDir::list() const {
  std::vector<std::string> names;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d))
      if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, ".."))
        names.push_back(e->d_name);
    closedir(d);
  }
  return names;
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace grove::test
