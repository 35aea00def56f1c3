#include "app/options.h"

#include "store/store.h"

namespace kiln::app {

std::string RecordsOptions::Path() const { return db.empty() ? store::DefaultDbPath() : db; }

}  // namespace kiln::app
