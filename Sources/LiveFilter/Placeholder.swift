import LiveCore
